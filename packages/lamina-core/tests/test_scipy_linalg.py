"""`lamina_core.scipy.linalg` against `jax.scipy.linalg`: `block_diag`'s printed jaxpr and
values over shapes and dtypes, its gradient, vmap, and JAX's error for 3-D input."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import lamina_core
import lamina_core.scipy
from lamina_core.testing import Oracle, check_ad, check_vmap

pytestmark = pytest.mark.oracle

Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]


def linalg_of(jnp: ModuleType) -> Any:
    if jnp is lamina_core.numpy:
        return lamina_core.scipy.linalg
    import jax.scipy.linalg

    return jax.scipy.linalg


def block_diag() -> Program:
    return lambda jnp, lax: linalg_of(jnp).block_diag


SQUARE = np.arange(4, dtype=np.float32).reshape(2, 2) + 1
WIDE = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
ROW = np.array([7.0, 8.0, 9.0], np.float32)

CASES: list[tuple[str, tuple[Any, ...]]] = [
    ("one", (SQUARE,)),
    ("square_wide", (SQUARE, WIDE)),
    ("scalar_vector_matrix", (np.float32(5.0), ROW, WIDE)),
    ("mixed_dtypes", (np.array([[1, 2]], np.int32), SQUARE)),
    ("ints", (np.array([[1, 2]], np.int32), np.array([[3]], np.int32))),
    ("bool_and_float", (np.array([[True]]), ROW)),
    ("empty_block", (np.zeros((0, 2), np.float32), SQUARE)),
    ("python_scalar", (SQUARE, 3.0)),
]


@pytest.mark.parametrize(("name", "args"), CASES, ids=[c[0] for c in CASES])
def test_block_diag(oracle: Oracle, name: str, args: tuple[Any, ...]) -> None:
    oracle.check(block_diag(), *args)


def test_block_diag_no_arguments(oracle: Oracle) -> None:
    oracle.check(block_diag())


def test_block_diag_grad(oracle: Oracle) -> None:
    check_ad(oracle, block_diag(), SQUARE, WIDE, kinds=("jvp",), order=1)
    # Lamina's jit keeps the identity `atleast_2d` calls JAX's forwarding drops under grad,
    # so the grad jaxpr prints differently (as `jax.nn.identity`'s does); values agree.
    check_ad(oracle, block_diag(), SQUARE, WIDE, kinds=("grad",), printed=False, order=0)


def test_block_diag_vmap(oracle: Oracle) -> None:
    batch = np.stack([SQUARE, SQUARE * 2, -SQUARE])
    check_vmap(oracle, block_diag(), batch, WIDE, in_axes=(0, None))


def test_block_diag_rejects_3d() -> None:
    import jax.scipy.linalg

    cube = np.zeros((1, 1, 1), np.float32)
    with pytest.raises(ValueError) as theirs:
        jax.scipy.linalg.block_diag(SQUARE, cube)
    with pytest.raises(ValueError) as ours:
        lamina_core.scipy.linalg.block_diag(SQUARE, cube)
    assert str(ours.value).split(", got")[0] == str(theirs.value).split(", got")[0]


SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], np.float32)
SPD_BATCH = np.stack([SPD, SPD + np.eye(3, dtype=np.float32), SPD * 2])
RHS = np.array([1.0, -2.0, 3.0], np.float32)
RHS_MATRIX = np.arange(6, dtype=np.float32).reshape(3, 2) - 2
TRI = np.array([[2.0, 0.0, 0.0], [1.0, 3.0, 0.0], [-1.0, 0.5, 4.0]], np.float32)
GENERAL = np.array([[1.0, 2.0, 0.5], [4.0, -1.0, 2.0], [0.5, 3.0, 1.0]], np.float32)


def call(fn: Callable[[Any], Callable[..., Any]]) -> Program:
    return lambda jnp, lax: fn(linalg_of(jnp))


DECOMPOSITIONS: list[tuple[str, Callable[[Any], Callable[..., Any]], tuple[Any, ...]]] = [
    ("cholesky", lambda la: la.cholesky, (SPD,)),
    ("cholesky_lower", lambda la: lambda a: la.cholesky(a, lower=True), (SPD,)),
    ("cholesky_batch", lambda la: la.cholesky, (SPD_BATCH,)),
    ("cho_factor", lambda la: lambda a: la.cho_factor(a)[0], (SPD,)),
    ("cho_solve", lambda la: lambda a, b: la.cho_solve(la.cho_factor(a), b), (SPD, RHS)),
    (
        "cho_solve_lower_matrix",
        lambda la: lambda a, b: la.cho_solve(la.cho_factor(a, lower=True), b),
        (SPD, RHS_MATRIX),
    ),
    ("solve_triangular", lambda la: lambda a, b: la.solve_triangular(a, b, lower=True), (TRI, RHS)),
    (
        "solve_triangular_T",
        lambda la: lambda a, b: la.solve_triangular(a, b, trans="T", lower=True),
        (TRI, RHS_MATRIX),
    ),
    (
        "solve_triangular_2_unit",
        lambda la: lambda a, b: la.solve_triangular(a.T, b, trans=2, unit_diagonal=True),
        (TRI, RHS),
    ),
    ("lu_factor", lambda la: la.lu_factor, (GENERAL,)),
]


@pytest.mark.parametrize(("name", "fn", "args"), DECOMPOSITIONS, ids=[d[0] for d in DECOMPOSITIONS])
def test_decompositions(oracle: Oracle, name: str, fn: Any, args: tuple[Any, ...]) -> None:
    oracle.check(call(fn), *args)


@pytest.mark.parametrize("permute_l", [False, True])
def test_lu_values(oracle: Oracle, permute_l: bool) -> None:
    import jax

    args = (GENERAL,)
    prog = call(lambda la: lambda a: la.lu(a, permute_l=permute_l))
    closed = lamina_core.make_jaxpr(prog(lamina_core.numpy, lamina_core.lax))(*args)
    got = oracle.evaluate(closed, list(args))
    want = jax.tree_util.tree_leaves(oracle.jit(prog(oracle.jnp, oracle.lax))(*args))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-6, atol=2e-6)


def test_lu_jaxpr(oracle: Oracle) -> None:
    oracle.check(call(lambda la: la.lu), GENERAL, numerics=False)


def test_decompositions_grad(oracle: Oracle) -> None:
    solve = call(lambda la: lambda a, b: la.cho_solve(la.cho_factor(a), b))
    check_ad(oracle, solve, SPD, RHS, kinds=("jvp", "grad"), order=1)
    tri = call(lambda la: lambda a, b: la.solve_triangular(a, b, lower=True))
    check_ad(oracle, tri, TRI, RHS, kinds=("jvp", "grad"), order=1)
    check_ad(oracle, call(lambda la: la.cholesky), SPD, kinds=("grad",), order=0)


def test_solves_vmap(oracle: Oracle) -> None:
    solve = call(lambda la: lambda a, b: la.cho_solve(la.cho_factor(a), b))
    check_vmap(oracle, solve, SPD_BATCH, RHS, in_axes=(0, None))


def test_bad_trans() -> None:
    import jax.scipy.linalg

    with pytest.raises(ValueError) as theirs:
        jax.scipy.linalg.solve_triangular(TRI, RHS, trans=3)
    with pytest.raises(ValueError) as ours:
        lamina_core.scipy.linalg.solve_triangular(TRI, RHS, trans=3)
    assert str(ours.value) == str(theirs.value)
