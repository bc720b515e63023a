"""Differentiation of slicing, indexing, gather/scatter and sorting against JAX: printed jvp,
grad and grad(jit) jaxprs, values, and finite differences."""

from __future__ import annotations

import re
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import lamina_core
import lamina_core.numpy
from lamina_core.testing import Oracle, check_ad, sweep

pytestmark = pytest.mark.oracle

f32 = np.float32


def arr(*shape: int, lo: float = 0.2, hi: float = 0.9) -> np.ndarray:
    n = int(np.prod(shape)) if shape else 1
    return np.linspace(lo, hi, n).reshape(shape).astype(f32)


A = arr(3, 4)
V = np.array([0.3, -1.2, 2.5, 0.7, -0.1], f32)
B = np.array([[0.3, -1.2, 2.5], [0.7, -0.1, 1.1]], f32)


def rows_scatter(lax: ModuleType) -> Any:
    """Scatter whole rows of a matrix, indexed by a column of row numbers."""
    return lax.ScatterDimensionNumbers(
        update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
    )


Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]

CASES: list[tuple[str, Program, tuple[Any, ...]]] = [
    ("basic slice", lambda jnp, lax: lambda x: x[1:3] * 2.0, (A,)),
    ("strided slice", lambda jnp, lax: lambda x: x[::2, 1::2] * x[::2, ::2], (A,)),
    ("integer index", lambda jnp, lax: lambda x: x[1] * 2.0, (A,)),
    ("negative index", lambda jnp, lax: lambda x: x[-1, -2] * x[0, 0], (A,)),
    ("traced index", lambda jnp, lax: lambda x, i: x[i] * 2.0, (A, np.int32(1))),
    (
        "dynamic_slice",
        lambda jnp, lax: lambda x, i: lax.dynamic_slice(x, (i, 1), (2, 2)),
        (A, np.int32(1)),
    ),
    (
        "dynamic_update_slice",
        lambda jnp, lax: lambda x, u, i: lax.dynamic_update_slice(x, u * 3.0, (i, 0)),
        (A, arr(1, 4), np.int32(2)),
    ),
    ("fancy index", lambda jnp, lax: lambda x: x[np.array([0, 2, 2])] * 2.0, (A,)),
    ("fancy 2d", lambda jnp, lax: lambda x: x[np.array([0, 2]), np.array([1, 3])], (A,)),
    ("take", lambda jnp, lax: lambda x: jnp.take(x, np.array([3, 1]), axis=1), (A,)),
    (
        "at add",
        lambda jnp, lax: lambda x, u: jnp.asarray(x).at[np.array([0, 2, 2])].add(u),
        (A, arr(3, 4)),
    ),
    ("at get", lambda jnp, lax: lambda x: jnp.asarray(x).at[1].get() * 2.0, (A,)),
    (
        "at set repeated",
        lambda jnp, lax: lambda x, u: jnp.asarray(x).at[np.array([0, 2, 2])].set(u),
        (A, arr(3, 4)),
    ),
    (
        "at set unique",
        lambda jnp, lax: (
            lambda x, u: jnp.asarray(x).at[np.array([0, 2])].set(u, unique_indices=True)
        ),
        (A, arr(2, 4)),
    ),
    (
        "at mul unique",
        lambda jnp, lax: (
            lambda x, u: jnp.asarray(x).at[np.array([0, 2])].mul(u, unique_indices=True)
        ),
        (A, arr(2, 4)),
    ),
    (
        "at max",
        lambda jnp, lax: lambda x, u: jnp.asarray(x).at[np.array([0, 2, 2])].max(u),
        (A, arr(3, 4, lo=0.1, hi=1.5)),
    ),
    (
        "at min",
        lambda jnp, lax: lambda x, u: jnp.asarray(x).at[np.array([1, 1])].min(u),
        (A, arr(2, 4, lo=0.1, hi=1.5)),
    ),
    ("sort", lambda jnp, lax: lambda x: jnp.sort(x) * jnp.arange(5.0), (V,)),
    (
        "sort 2d",
        lambda jnp, lax: lambda x: jnp.sort(x, axis=0),
        (np.array([[3.0, 1.0], [0.5, 2.0]], f32),),
    ),
    ("lax.sort multi", lambda jnp, lax: lambda x, y: lax.sort((x, y), num_keys=1)[1], (V, V * 2.0)),
    ("top_k", lambda jnp, lax: lambda x: lax.top_k(x, 3)[0] * 2.0, (V,)),
    ("argsort", lambda jnp, lax: lambda x: x[jnp.argsort(x)], (V,)),
    # More slicing.
    ("reversed slice", lambda jnp, lax: lambda x: x[::-2] * x[:3], (V,)),
    ("lax.slice strides", lambda jnp, lax: lambda x: lax.slice(x, (0, 1), (3, 4), (2, 2)), (A,)),
    (
        "dynamic_slice clamped",
        lambda jnp, lax: lambda x, i: lax.dynamic_slice(x, (i,), (3,)) ** 2,
        (V, np.int32(4)),
    ),
    (
        "dynamic_update_slice traced",
        lambda jnp, lax: lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)),
        (A, arr(2, 2), np.int32(1), np.int32(5)),
    ),
    # More gathers and scatters.
    (
        "take_along_axis",
        lambda jnp, lax: (
            lambda x: jnp.take_along_axis(x, np.array([[0, 2], [1, 1], [3, 0]]), axis=1)
        ),
        (A,),
    ),
    ("at get fancy", lambda jnp, lax: lambda x: jnp.asarray(x).at[np.array([2, 0, 2])].get(), (A,)),
    (
        "lax.gather clip",
        lambda jnp, lax: (
            lambda x: lax.gather(
                x,
                np.array([[1], [7]], np.int32),
                lax.GatherDimensionNumbers(
                    offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)
                ),
                (1, 4),
                mode="clip",
            )
        ),
        (A,),
    ),
    (
        "lax.scatter_add repeated",
        lambda jnp, lax: (
            lambda x, u: lax.scatter_add(x, np.array([[1], [1]], np.int32), u, rows_scatter(lax))
        ),
        (A, arr(2, 4)),
    ),
    (
        "lax.scatter_sub",
        lambda jnp, lax: (
            lambda x, u: lax.scatter_sub(x, np.array([[1], [0]], np.int32), u, rows_scatter(lax))
        ),
        (A, arr(2, 4)),
    ),
    (
        "at set traced index",
        lambda jnp, lax: lambda x, i: jnp.asarray(x).at[i].set(x[0] * 2.0),
        (A, np.int32(2)),
    ),
    (
        "at add traced index",
        lambda jnp, lax: lambda x, u, i: jnp.asarray(x).at[i].add(u),
        (A, arr(4), np.int32(1)),
    ),
    ("at mul scalar index", lambda jnp, lax: lambda x, u: jnp.asarray(x).at[1].mul(u), (A, arr(4))),
    (
        "at min unique",
        lambda jnp, lax: (
            lambda x, u: jnp.asarray(x).at[np.array([0, 2])].min(u, unique_indices=True)
        ),
        (A, arr(2, 4, lo=0.1, hi=1.5)),
    ),
    # More sorting, selection and masking.
    (
        "lax.sort two keys",
        # Integer first keys with ties, broken by the second (the float argument comes first
        # for the finite differences' tolerance, which follows the first argument's type).
        lambda jnp, lax: lambda y, x, z: lax.sort((x, y, z), num_keys=2),
        (
            np.array([0.5, 0.2, 0.1, 0.9], f32),
            np.array([1, 0, 1, 0], np.int32),
            np.array([1.0, 2.0, 3.0, 4.0], f32),
        ),
    ),
    (
        "lax.sort integer operand",
        lambda jnp, lax: lambda x, i: lax.sort((x, i), num_keys=1),
        (V, np.arange(5, dtype=np.int32)),
    ),
    # `tuple`: JAX's `top_k` returns a list where Lamina's returns a tuple.
    ("top_k 2d", lambda jnp, lax: lambda x: tuple(lax.top_k(x, 2)), (B,)),
    ("argsort times x", lambda jnp, lax: lambda x: jnp.argsort(x).astype(f32) * x, (V,)),
    ("where mask", lambda jnp, lax: lambda x: jnp.where(x > 0.5, x * 2.0, x[::-1]), (V,)),
]

# bfloat16: JAX's text and values; finite differences are too coarse at 8 bits of mantissa.
BF16_CASES: list[tuple[str, Program, tuple[Any, ...]]] = [
    ("bf16 slice", lambda jnp, lax: lambda x: x[1:3] * x[0:2], (V,)),
    ("bf16 gather", lambda jnp, lax: lambda x: x[np.array([0, 3, 3])] * 2.0, (V,)),
    ("bf16 sort", lambda jnp, lax: lambda x: jnp.sort(x), (V,)),
    (
        "bf16 at set",
        lambda jnp, lax: lambda x: jnp.asarray(x).at[np.array([1, 1])].set(x[:2]),
        (V,),
    ),
]


@pytest.mark.parametrize(("name", "program", "args"), sweep(CASES, [c[0] for c in CASES]))
def test_rule_matches_jax(
    oracle: Oracle, name: str, program: Program, args: tuple[Any, ...]
) -> None:
    # `.at` needs an array type; core alone computes eagerly on NumPy arrays, which lack it,
    # so those programs skip the finite differences (their values are still JAX's).
    check_ad(oracle, program, *args, order=0 if name.startswith("at ") else 2)


@pytest.mark.parametrize(("name", "program", "args"), BF16_CASES, ids=[c[0] for c in BF16_CASES])
def test_bfloat16_rule_matches_jax(
    oracle: Oracle, name: str, program: Program, args: tuple[Any, ...]
) -> None:
    check_ad(oracle, program, *(a.astype(oracle.jnp.bfloat16) for a in args), order=0)


# --- JAX's errors ---------------------------------------------------------------------------

REPEATED = np.array([0, 2, 2])
X4 = np.arange(4.0, dtype=f32)
U3 = np.array([1.0, 2.0, 3.0], f32)

ERRORS: list[tuple[str, Callable[[Any, ModuleType], Any], str]] = [
    (
        "transposing a scatter with repeated indices",
        lambda api, jnp: api.linear_transpose(lambda u: jnp.zeros(4, f32).at[REPEATED].set(u), U3)(
            X4
        ),
        "scatter transpose is only implemented where unique_indices=True",
    ),
    (
        "differentiating scatter-mul's updates with repeated indices",
        lambda api, jnp: api.grad(
            api.jit(lambda x, u: jnp.asarray(x).at[REPEATED].mul(u).sum()), argnums=1
        )(X4, U3),
        "scatter_mul gradients are only implemented if `unique_indices=True`",
    ),
    (
        "differentiating scatter-apply",
        lambda api, jnp: api.jvp(
            api.jit(lambda x: jnp.asarray(x).at[REPEATED].apply(jnp.sin)), (X4,), (X4,)
        ),
        "scatter_apply JVP not implemented",
    ),
]


@pytest.mark.parametrize(("name", "run", "message"), ERRORS, ids=[e[0] for e in ERRORS])
def test_error_matches_jax(
    oracle: Oracle, name: str, run: Callable[[Any, ModuleType], Any], message: str
) -> None:
    for api, jnp in ((oracle.jax, oracle.jnp), (lamina_core, lamina_core.numpy)):
        with pytest.raises(NotImplementedError, match=re.escape(message)):
            run(api, jnp)


def test_scatter_mul_with_repeated_indices_differentiates_in_the_operand(oracle: Oracle) -> None:
    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        return lambda x: jnp.asarray(x).at[REPEATED].mul(U3)

    check_ad(oracle, program, X4, order=0)
    for api, jnp in ((oracle.jax, oracle.jnp), (lamina_core, lamina_core.numpy)):

        def f(x: Any, u: Any, jnp: Any = jnp) -> Any:
            return jnp.asarray(x).at[REPEATED].mul(u).sum()

        grad = api.grad(api.jit(f))(X4, U3)
        np.testing.assert_allclose(np.asarray(grad), [1.0, 1.0, 6.0, 1.0])


def test_integer_index_cotangent_is_float0(oracle: Oracle) -> None:
    for api in (oracle.jax, lamina_core):
        gx, gi = api.grad(lambda x, i: x[i], argnums=(0, 1), allow_int=True)(X4, np.int32(1))
        np.testing.assert_allclose(np.asarray(gx), [0.0, 1.0, 0.0, 0.0])
        assert np.asarray(gi).dtype == lamina_core.ir.dtypes.float0
