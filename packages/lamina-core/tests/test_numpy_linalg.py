"""Oracle tests for the `jnp` products (dot matmul vdot inner outer tensordot einsum, `@`,
`.dot`) and sorting (sort, argsort).

Products print JAX 0.10.2's jaxprs byte for byte; einsum follows opt_einsum's contraction
order as JAX does. jnp.sort and jnp.argsort are nested `jit`s, in Lamina as in JAX.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import hypothesis.strategies as st
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings

import lamina_core
from lamina_core.testing import Oracle

Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]
Case = tuple[str, Program, tuple[Any, ...]]

F32 = np.dtype(np.float32)
BF16 = np.dtype(ml_dtypes.bfloat16)
I32 = np.dtype(np.int32)
BOOL = np.dtype(bool)
C64 = np.dtype(np.complex64)


def data(shape: tuple[int, ...], dtype: np.dtype = F32, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == BOOL:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(-3, 4, size=shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)).astype(dtype)
    return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)


def same_error(oracle: Oracle, program: Program, *args: Any) -> str:
    with pytest.raises(Exception) as theirs:
        oracle.jax.make_jaxpr(program(oracle.jnp, oracle.lax))(*args)
    with pytest.raises(type(theirs.value)) as ours:
        lamina_core.make_jaxpr(program(lamina_core.numpy, lamina_core.lax))(*args)
    assert str(ours.value) == str(theirs.value)
    return str(ours.value)


A, B, C = data((2, 3)), data((3, 4), seed=1), data((4, 5), seed=2)
V, W = data((3,), seed=3), data((4,), seed=4)
AI = data((2, 3), I32)

PRODUCTS: list[Case] = [
    # dot
    ("dot matrix", lambda jnp, lax: lambda x, y: jnp.dot(x, y), (A, B)),
    ("dot matrix vector", lambda jnp, lax: lambda x, y: jnp.dot(x, y), (A, V)),
    ("dot vectors", lambda jnp, lax: lambda x, y: jnp.dot(x, y), (V, V)),
    ("dot weak scalar", lambda jnp, lax: lambda x, y: jnp.dot(x, y), (2.0, B)),
    ("dot python int arg", lambda jnp, lax: lambda x, y: jnp.dot(x, y), (V, 2)),
    ("dot both weak", lambda jnp, lax: lambda x, y: jnp.dot(x, y) * 2.0, (1.5, 2.0)),
    ("dot n-d", lambda jnp, lax: lambda x, y: jnp.dot(x, y), (data((2, 3, 3)), data((4, 3, 5)))),
    ("dot mixed", lambda jnp, lax: lambda x, y: jnp.dot(x, y), (AI, B)),
    ("dot int", lambda jnp, lax: lambda x, y: jnp.dot(x, y), (AI, data((3,), I32))),
    (
        "dot bool",
        lambda jnp, lax: lambda x, y: jnp.dot(x, y),
        (data((2, 3), BOOL), data((3,), BOOL)),
    ),
    (
        "dot bf16",
        lambda jnp, lax: lambda x, y: jnp.dot(x, y),
        (data((2, 3), BF16), data((3, 2), BF16)),
    ),
    (
        "dot preferred",
        lambda jnp, lax: lambda x, y: jnp.dot(x, y, preferred_element_type=jnp.float32),
        (data((2, 3), BF16), data((3, 2), BF16)),
    ),
    ("dot precision", lambda jnp, lax: lambda x, y: jnp.dot(x, y, precision="highest"), (A, B)),
    ("dot empty", lambda jnp, lax: lambda x, y: jnp.dot(x, y), (data((2, 0)), data((0, 3)))),
    ("dot method", lambda jnp, lax: lambda x, y: x.dot(y), (A, B)),
    # matmul
    ("matmul", lambda jnp, lax: lambda x, y: jnp.matmul(x, y), (A, B)),
    ("matmul operator", lambda jnp, lax: lambda x, y: x @ y, (A, B)),
    ("rmatmul constant", lambda jnp, lax: lambda y: np.ones((2, 3), np.float32) @ y, (B,)),
    ("matmul vector matrix", lambda jnp, lax: lambda x, y: x @ y, (V, B)),
    ("matmul matrix vector", lambda jnp, lax: lambda x, y: x @ y, (A, V)),
    ("matmul vectors", lambda jnp, lax: lambda x, y: x @ y, (V, V)),
    ("matmul batch broadcast", lambda jnp, lax: lambda x, y: x @ y, (data((5, 2, 3)), B)),
    ("matmul batch", lambda jnp, lax: lambda x, y: x @ y, (data((6, 2, 3)), data((6, 3, 2)))),
    (
        "matmul size-1 batch",
        lambda jnp, lax: lambda x, y: x @ y,
        (data((1, 2, 3)), data((1, 3, 2))),
    ),
    (
        "matmul squeeze one side",
        lambda jnp, lax: lambda x, y: x @ y,
        (data((5, 1, 2, 3)), data((4, 3, 2))),
    ),
    (
        "matmul crossed batch",
        lambda jnp, lax: lambda x, y: x @ y,
        (data((6, 1, 2, 3)), data((1, 5, 3, 2))),
    ),
    ("matmul vector batch", lambda jnp, lax: lambda x, y: x @ y, (V, data((5, 3, 2)))),
    ("matmul batch vector", lambda jnp, lax: lambda x, y: x @ y, (data((5, 2, 3)), V)),
    ("matmul mixed", lambda jnp, lax: lambda x, y: jnp.matmul(x, y), (AI, B)),
    ("matmul int", lambda jnp, lax: lambda x, y: x @ y, (AI, data((3, 2), I32))),
    (
        "matmul bf16 preferred",
        lambda jnp, lax: lambda x, y: jnp.matmul(x, y, preferred_element_type=jnp.float32),
        (data((2, 3), BF16), data((3, 2), BF16)),
    ),
    # vdot inner outer tensordot
    ("vdot", lambda jnp, lax: lambda x, y: jnp.vdot(x, y), (A, data((6,)))),
    ("vdot vectors", lambda jnp, lax: lambda x, y: jnp.vdot(x, y), (V, V)),
    (
        "vdot complex",
        lambda jnp, lax: lambda x, y: jnp.vdot(x, y),
        (data((3,), C64), data((3,), C64)),
    ),
    ("inner", lambda jnp, lax: lambda x, y: jnp.inner(x, y), (A, data((5, 3)))),
    ("inner vectors", lambda jnp, lax: lambda x, y: jnp.inner(x, y), (V, V)),
    ("inner scalar", lambda jnp, lax: lambda x, y: jnp.inner(x, y), (A, 2)),
    (
        "inner scalar preferred",
        lambda jnp, lax: lambda x, y: jnp.inner(x, y, preferred_element_type=jnp.float32),
        (AI, 2),
    ),
    ("outer", lambda jnp, lax: lambda x, y: jnp.outer(x, y), (V, data((4,), I32))),
    ("outer flattens", lambda jnp, lax: lambda x, y: jnp.outer(x, y), (A, V)),
    ("outer weak", lambda jnp, lax: lambda x, y: jnp.outer(x, y), (V, 2.0)),
    ("tensordot 1", lambda jnp, lax: lambda x, y: jnp.tensordot(x, y, 1), (A, B)),
    (
        "tensordot default",
        lambda jnp, lax: lambda x, y: jnp.tensordot(x, y),
        (data((2, 3, 4)), data((3, 4, 5))),
    ),
    (
        "tensordot int pair",
        lambda jnp, lax: lambda x, y: jnp.tensordot(x, y, axes=(0, 1)),
        (data((3, 4)), A),
    ),
    (
        "tensordot lists",
        lambda jnp, lax: lambda x, y: jnp.tensordot(x, y, axes=([0, 2], [2, 0])),
        (data((3, 4, 5)), data((5, 2, 3))),
    ),
    (
        "tensordot negative",
        lambda jnp, lax: lambda x, y: jnp.tensordot(x, y, axes=(-1, -2)),
        (A, B),
    ),
    ("tensordot outer", lambda jnp, lax: lambda x, y: jnp.tensordot(x, y, 0), (V, W)),
    ("tensordot mixed", lambda jnp, lax: lambda x, y: jnp.tensordot(x, y, 1), (AI, B)),
    # einsum
    ("einsum matmul", lambda jnp, lax: lambda x, y: jnp.einsum("ij,jk->ik", x, y), (A, B)),
    (
        "einsum chain",
        lambda jnp, lax: lambda x, y, z: jnp.einsum("ij,jk,kl->il", x, y, z),
        (A, B, C),
    ),
    (
        "einsum chain unoptimized",
        lambda jnp, lax: lambda x, y, z: jnp.einsum("ij,jk,kl->il", x, y, z, optimize=False),
        (A, B, C),
    ),
    (
        "einsum chain greedy",
        lambda jnp, lax: lambda x, y, z: jnp.einsum("ij,jk,kl->il", x, y, z, optimize="greedy"),
        (A, B, C),
    ),
    (
        "einsum chain optimal",
        lambda jnp, lax: lambda x, y, z: jnp.einsum("ij,jk,kl", x, y, z, optimize=True),
        (A, B, C),
    ),
    (
        "einsum four",
        lambda jnp, lax: lambda w, x, y, z: jnp.einsum("ab,bc,cd,de->ae", w, x, y, z),
        (data((2, 2)), data((2, 3)), data((3, 2)), data((2, 3))),
    ),
    ("einsum diagonal", lambda jnp, lax: lambda x: jnp.einsum("ii->i", x), (data((3, 3)),)),
    ("einsum trace", lambda jnp, lax: lambda x: jnp.einsum("ii", x), (data((3, 3)),)),
    (
        "einsum repeated with free",
        lambda jnp, lax: lambda x: jnp.einsum("iij->j", x),
        (data((3, 3, 2)),),
    ),
    (
        "einsum repeated apart",
        lambda jnp, lax: lambda x: jnp.einsum("iji->j", x),
        (data((3, 2, 3)),),
    ),
    (
        "einsum repeated then dot",
        lambda jnp, lax: lambda x, y: jnp.einsum("ii,ij->j", x, y),
        (data((3, 3)), B),
    ),
    ("einsum total", lambda jnp, lax: lambda x: jnp.einsum("ij->", x), (A,)),
    ("einsum transpose", lambda jnp, lax: lambda x: jnp.einsum("ij->ji", x), (A,)),
    ("einsum identity", lambda jnp, lax: lambda x: jnp.einsum("ij->ij", x), (A,)),
    ("einsum row sums", lambda jnp, lax: lambda x: jnp.einsum("ij->j", x), (A,)),
    ("einsum hadamard sum", lambda jnp, lax: lambda x, y: jnp.einsum("ij,ij->i", x, y), (A, A)),
    (
        "einsum batch",
        lambda jnp, lax: lambda x, y: jnp.einsum("bij,bjk->bik", x, y),
        (data((5, 2, 3)), data((5, 3, 4))),
    ),
    (
        "einsum batch transposed",
        lambda jnp, lax: lambda x, y: jnp.einsum("bij,bjk->bki", x, y),
        (data((5, 2, 3)), data((5, 3, 4))),
    ),
    ("einsum outer", lambda jnp, lax: lambda x, y: jnp.einsum("i,j->ij", x, y), (V, W)),
    ("einsum implicit", lambda jnp, lax: lambda x, y: jnp.einsum("ij,kj", x, y), (A, data((4, 3)))),
    (
        "einsum ellipsis",
        lambda jnp, lax: lambda x, y: jnp.einsum("...ij,...jk->...ik", x, y),
        (data((5, 2, 3)), data((5, 3, 4))),
    ),
    ("einsum matvec", lambda jnp, lax: lambda x, y: jnp.einsum("ij,j->i", x, y), (A, V)),
    (
        "einsum unique contracted",
        lambda jnp, lax: lambda x, y: jnp.einsum("ijk,jl->il", x, y),
        (data((2, 3, 4)), data((3, 5))),
    ),
    (
        "einsum size-1 broadcast",
        lambda jnp, lax: lambda x, y: jnp.einsum("ij,jk->ik", x, y),
        (data((2, 1)), B),
    ),
    (
        "einsum size-1 batch",
        lambda jnp, lax: lambda x, y: jnp.einsum("ij,ij->ij", x, y),
        (data((2, 1)), data((2, 4))),
    ),
    ("einsum sublists", lambda jnp, lax: lambda x, y: jnp.einsum(x, [0, 1], y, [1, 2]), (A, B)),
    ("einsum mixed", lambda jnp, lax: lambda x, y: jnp.einsum("ij,jk->ik", x, y), (AI, B)),
    (
        "einsum bool",
        lambda jnp, lax: lambda x, y: jnp.einsum("ij,jk->ik", x, y),
        (data((2, 3), BOOL), data((3, 4), BOOL)),
    ),
    (
        "einsum bool diagonal",
        lambda jnp, lax: lambda x: jnp.einsum("ii->i", x),
        (data((3, 3), BOOL),),
    ),
    (
        "einsum bf16 preferred",
        lambda jnp, lax: (
            lambda x, y: jnp.einsum("ij,jk->ik", x, y, preferred_element_type=jnp.float32)
        ),
        (data((2, 3), BF16), data((3, 4), BF16)),
    ),
    ("einsum int sum", lambda jnp, lax: lambda x: jnp.einsum("ij->i", x), (AI,)),
    (
        "einsum precision",
        lambda jnp, lax: lambda x, y: jnp.einsum("ij,jk->ik", x, y, precision="highest"),
        (A, B),
    ),
    ("einsum weak scalar", lambda jnp, lax: lambda x, y: jnp.einsum(",ij->ij", x, y), (2.0, A)),
]


@pytest.mark.oracle
@pytest.mark.parametrize(("name", "program", "args"), PRODUCTS, ids=[c[0] for c in PRODUCTS])
def test_products_match_jax(oracle: Oracle, name: str, program: Program, args: Any) -> None:
    oracle.check(program, *args)


PRODUCT_ERRORS: list[Case] = [
    ("matmul scalar", lambda jnp, lax: lambda x, y: jnp.matmul(x, y), (2.0, A)),
    ("matmul batch", lambda jnp, lax: lambda x, y: x @ y, (data((2, 2, 3)), data((3, 3, 4)))),
    ("matmul inner", lambda jnp, lax: lambda x, y: x @ y, (A, A)),
    ("dot inner", lambda jnp, lax: lambda x, y: jnp.dot(x, y), (A, A)),
    ("tensordot too many", lambda jnp, lax: lambda x, y: jnp.tensordot(x, y, 3), (A, B)),
    ("tensordot unequal", lambda jnp, lax: lambda x, y: jnp.tensordot(x, y, ([0], [0, 1])), (A, B)),
    ("tensordot mixed", lambda jnp, lax: lambda x, y: jnp.tensordot(x, y, (0, [0])), (A, B)),
    ("tensordot bad", lambda jnp, lax: lambda x, y: jnp.tensordot(x, y, "x"), (A, B)),
    ("tensordot axis", lambda jnp, lax: lambda x, y: jnp.tensordot(x, y, (2, 0)), (A, B)),
    ("dot list", lambda jnp, lax: lambda x: jnp.dot(x, [1.0, 2.0, 3.0]), (A,)),
    ("outer out", lambda jnp, lax: lambda x: jnp.outer(x, x, out=x), (V,)),
]


@pytest.mark.oracle
@pytest.mark.parametrize(
    ("name", "program", "args"), PRODUCT_ERRORS, ids=[c[0] for c in PRODUCT_ERRORS]
)
def test_product_errors_match_jax(oracle: Oracle, name: str, program: Program, args: Any) -> None:
    same_error(oracle, program, *args)


@st.composite
def _einsum_case(draw: st.DrawFn) -> tuple[str, list[np.ndarray]]:
    """Two or three operands over letters a-e, each letter with one size, output a subset."""
    sizes = {ch: draw(st.integers(1, 3)) for ch in "abcde"}
    n = draw(st.integers(1, 3))
    terms = ["".join(draw(st.permutations("abcde"))[: draw(st.integers(1, 3))]) for _ in range(n)]
    used = sorted(set("".join(terms)))
    out = "".join(draw(st.permutations(used))[: draw(st.integers(0, len(used)))])
    seed = draw(st.integers(0, 50))
    operands = [data(tuple(sizes[ch] for ch in t), F32, seed + i) for i, t in enumerate(terms)]
    return ",".join(terms) + "->" + out, operands


@pytest.mark.oracle
@settings(derandomize=True, max_examples=30, deadline=None)
@given(case=_einsum_case())
def test_random_einsums_match_jax(oracle: Oracle, case: tuple[str, list[np.ndarray]]) -> None:
    spec, operands = case
    oracle.check(lambda jnp, lax: lambda *xs: jnp.einsum(spec, *xs), *operands)


# sorting ------------------------------------------------------------------------------------

S = np.array([[3.0, 1.0, 2.0, 1.0], [0.5, -1.0, 0.5, 4.0], [2.0, 2.0, 2.0, 2.0]], np.float32)
SI = np.array([[3, 1, 2, 1, 0], [5, -1, 5, 4, 4]], np.int32)

SORTS: list[Case] = [
    ("sort", lambda jnp, lax: lambda x: jnp.sort(x), (S,)),
    ("sort axis 0", lambda jnp, lax: lambda x: jnp.sort(x, axis=0), (S,)),
    ("sort flat", lambda jnp, lax: lambda x: jnp.sort(x, axis=None), (S,)),
    ("sort descending", lambda jnp, lax: lambda x: jnp.sort(x, descending=True), (SI,)),
    ("sort unstable", lambda jnp, lax: lambda x: jnp.sort(x, stable=False), (S,)),
    ("sort bool", lambda jnp, lax: lambda x: jnp.sort(x), (data((2, 5), BOOL),)),
    ("sort bf16", lambda jnp, lax: lambda x: jnp.sort(x, 0), (S.astype(BF16),)),
    ("sort method", lambda jnp, lax: lambda x: x.sort(), (S,)),
    ("argsort", lambda jnp, lax: lambda x: jnp.argsort(x), (S,)),
    ("argsort axis 0", lambda jnp, lax: lambda x: jnp.argsort(x, axis=0), (SI,)),
    ("argsort flat", lambda jnp, lax: lambda x: jnp.argsort(x, axis=None), (SI,)),
    (
        "argsort descending stable",
        lambda jnp, lax: lambda x: jnp.argsort(x, descending=True),
        (SI,),
    ),
    ("argsort dtype", lambda jnp, lax: lambda x: jnp.argsort(x, dtype=jnp.int8), (S,)),
    ("argsort method", lambda jnp, lax: lambda x: x.argsort(), (S,)),
    ("argsort 0-d flat", lambda jnp, lax: lambda x: jnp.argsort(x, axis=None), (np.float32(1.0),)),
]


@pytest.mark.oracle
@pytest.mark.parametrize(("name", "program", "args"), SORTS, ids=[c[0] for c in SORTS])
def test_sorts_match_jax(oracle: Oracle, name: str, program: Program, args: Any) -> None:
    oracle.check(program, *args)


@pytest.mark.oracle
def test_unstable_descending_argsort_sorts_like_jax(oracle: Oracle) -> None:
    # Without stability the order of ties is the backend's choice: compare on distinct keys.
    x = np.random.default_rng(0).permutation(12).reshape(3, 4).astype(np.float32)
    oracle.check(lambda jnp, lax: lambda x: jnp.argsort(x, descending=True, stable=False), x)


@pytest.mark.oracle
@pytest.mark.parametrize(
    ("name", "program", "args"),
    [
        ("kind", lambda jnp, lax: lambda x: jnp.sort(x, kind="quicksort"), (S,)),
        ("order", lambda jnp, lax: lambda x: jnp.argsort(x, order="x"), (S,)),
        ("axis", lambda jnp, lax: lambda x: jnp.sort(x, axis=2), (S,)),
    ],
    ids=["kind", "order", "axis"],
)
def test_sort_errors_match_jax(oracle: Oracle, name: str, program: Program, args: Any) -> None:
    same_error(oracle, program, *args)
