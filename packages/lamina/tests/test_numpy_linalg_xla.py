"""`lamina.numpy.linalg`'s solvers and array-API names, and the `lamina.scipy.linalg` functions
on them, run on XLA against JAX 0.10.2: jitted and eager results equal JAX's, and the lowered
modules of `solve` and `inv` are JAX's, text for text (the LU factorization's
pivots-to-permutation loop included: a scan's body is a private `@closed_call` function)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest

import lamina
import lamina.numpy.linalg
import lamina.scipy.linalg
from lamina_core.testing import sweep

pytestmark = pytest.mark.oracle

_rng = np.random.default_rng(5)


def _general(*shape: int) -> np.ndarray:
    out: np.ndarray = _rng.standard_normal(shape).astype(np.float32)
    return out


def _well_conditioned(*shape: int) -> np.ndarray:
    n = shape[-1]
    out: np.ndarray = (_general(*shape) + 2 * n**0.5 * np.eye(n)).astype(np.float32)
    return out


A, AB = _well_conditioned(3, 3), _well_conditioned(2, 3, 3)
V, M, MB = _general(3), _general(3, 2), _general(2, 3, 2)
SPD = (A @ A.T + 3 * np.eye(3)).astype(np.float32)

Program = Callable[[Any], Callable[..., Any]]
CASES: dict[str, tuple[Program, Program, tuple[Any, ...]]] = {
    "solve": (lambda m: m.linalg.solve, lambda m: m.linalg.solve, (AB, MB)),
    "solve_vector": (lambda m: m.linalg.solve, lambda m: m.linalg.solve, (A, V)),
    "inv": (lambda m: m.linalg.inv, lambda m: m.linalg.inv, (AB,)),
    "lstsq": (lambda m: m.linalg.lstsq, lambda m: m.linalg.lstsq, (_general(5, 3), _general(5))),
    "matrix_power": (
        lambda m: lambda a: m.linalg.matrix_power(a, -5),
        lambda m: lambda a: m.linalg.matrix_power(a, -5),
        (AB,),
    ),
    "tensorsolve": (
        lambda m: m.linalg.tensorsolve,
        lambda m: m.linalg.tensorsolve,
        (_well_conditioned(4, 4).reshape(2, 2, 4), _general(2, 2)),
    ),
    "tensorinv": (
        lambda m: m.linalg.tensorinv,
        lambda m: m.linalg.tensorinv,
        (_well_conditioned(6, 6).reshape(2, 3, 6),),
    ),
    "cond_inf": (
        lambda m: lambda a: m.linalg.cond(a, np.inf),
        lambda m: lambda a: m.linalg.cond(a, np.inf),
        (AB,),
    ),
    "multi_dot": (
        lambda m: m.linalg.multi_dot,
        lambda m: m.linalg.multi_dot,
        ([V, _general(3, 4), _general(4, 2)],),
    ),
    "array_api": (
        lambda m: (
            lambda a, b: (
                m.linalg.outer(a[0, :, 0], b[0, :, 0]),
                m.linalg.cross(a[..., 0], a[..., 1]),
                m.linalg.vecdot(a, a),
                m.linalg.matrix_transpose(b),
                m.linalg.diagonal(a, offset=1),
                m.linalg.trace(a),
                m.linalg.tensordot(a, b, axes=1),
                m.linalg.matmul(a, b[0]),
                m.linalg.matrix_norm(a, ord=1),
            )
        ),
        lambda m: (
            lambda a, b: (
                m.linalg.outer(a[0, :, 0], b[0, :, 0]),
                m.linalg.cross(a[..., 0], a[..., 1]),
                m.linalg.vecdot(a, a),
                m.linalg.matrix_transpose(b),
                m.linalg.diagonal(a, offset=1),
                m.linalg.trace(a),
                m.linalg.tensordot(a, b, axes=1),
                m.linalg.matmul(a, b[0]),
                m.linalg.matrix_norm(a, ord=1),
            )
        ),
        (_general(2, 3, 3), _general(3, 3, 2)),
    ),
    "scipy_lu_solve": (
        lambda m: lambda a, b: m.linalg.lu_solve(m.linalg.lu_factor(a), b, trans=1),
        lambda m: lambda a, b: m.linalg.lu_solve(m.linalg.lu_factor(a), b, trans=1),
        (A, M),
    ),
    "scipy_solve_pos": (
        lambda m: lambda a, b: m.linalg.solve(a, b, assume_a="pos"),
        lambda m: lambda a, b: m.linalg.solve(a, b, assume_a="pos"),
        (SPD, M),
    ),
    "scipy_factorizations": (
        lambda m: lambda a: (m.linalg.qr(a), m.linalg.svd(a), m.linalg.eigh(a), m.linalg.det(a)),
        lambda m: lambda a: (m.linalg.qr(a), m.linalg.svd(a), m.linalg.eigh(a), m.linalg.det(a)),
        (SPD,),
    ),
}


def _modules(case: str) -> tuple[Callable[..., Any], Callable[..., Any], tuple[Any, ...]]:
    ours, theirs, args = CASES[case]
    if case.startswith("scipy"):
        return ours(lamina.scipy), theirs(jax.scipy), args
    return ours(lamina.numpy), theirs(jax.numpy), args


def _close(ours: Any, theirs: Any) -> None:
    ours_leaves, theirs_leaves = jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)
    assert len(ours_leaves) == len(theirs_leaves)
    for x, y in zip(ours_leaves, theirs_leaves, strict=True):
        assert np.asarray(x).dtype == np.asarray(y).dtype
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", sweep(sorted(CASES), sorted(CASES), unpack=False))
def test_runs_as_jax(case: str) -> None:
    ours, theirs, args = _modules(case)
    expected = jax.jit(theirs)(*args)
    _close(lamina.jit(ours)(*args), expected)
    _close(ours(*args), expected)


def test_solve_grad_runs_as_jax() -> None:
    def loss(m: Any) -> Callable[..., Any]:
        return lambda a, b: (m.linalg.inv(a) @ m.linalg.solve(a, b)).sum()

    ours = lamina.jit(lamina.grad(loss(lamina.numpy), argnums=(0, 1)))(AB, MB)
    _close(ours, jax.jit(jax.grad(loss(jax.numpy), argnums=(0, 1)))(AB, MB))


@pytest.mark.parametrize("case", ["solve", "solve_vector", "inv"])
def test_lowered_module_is_jaxs(case: str) -> None:
    ours, theirs, args = _modules(case)
    assert lamina.jit(ours).lower(*args).as_text() == jax.jit(theirs).lower(*args).as_text()
