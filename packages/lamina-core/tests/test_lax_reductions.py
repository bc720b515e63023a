"""Oracle tests for the lax reductions and scans: reduce_*, argmax/argmin and cum*.

Each program prints JAX 0.10.2's jaxpr byte for byte and computes JAX's numbers, over several
dtypes, negative and empty axes, 0-d and empty operands, and weakly typed inputs. Misuse raises
JAX's own error text.
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

F32 = np.dtype(np.float32)
BF16 = np.dtype(ml_dtypes.bfloat16)
I32 = np.dtype(np.int32)
U8 = np.dtype(np.uint8)
BOOL = np.dtype(bool)


def data(shape: tuple[int, ...], dtype: np.dtype, seed: int = 0) -> np.ndarray:
    """Small values that sums and products of a dozen elements keep exact enough."""
    rng = np.random.default_rng(seed)
    if dtype == BOOL:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        low = 0 if dtype.kind == "u" else -4
        return rng.integers(low, 5, size=shape).astype(dtype)
    return rng.uniform(0.5, 2.0, size=shape).astype(dtype)


def same_error(oracle: Oracle, program: Program, *args: Any) -> str:
    """Both libraries reject the program with the same exception type and message."""
    with pytest.raises(Exception) as theirs:
        oracle.jax.make_jaxpr(program(oracle.jnp, oracle.lax))(*args)
    with pytest.raises(type(theirs.value)) as ours:
        lamina_core.make_jaxpr(program(lamina_core.numpy, lamina_core.lax))(*args)
    assert str(ours.value) == str(theirs.value)
    return str(ours.value)


# reduce_* ------------------------------------------------------------------------------------

ARITH = ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min"]
LOGICAL = ["reduce_and", "reduce_or", "reduce_xor"]
AXES_CASES: list[tuple[tuple[int, ...], tuple[int, ...]]] = [
    ((2, 3), (0,)),
    ((2, 3), (1,)),
    ((2, 3), (0, 1)),
    ((2, 3), (1, 0)),
    ((2, 3, 4), (0, 2)),
    ((2, 3), ()),
    ((), ()),
    ((0, 3), (0,)),
    ((3, 0), (1,)),
]


def _reduce(name: str, axes: tuple[int, ...]) -> Program:
    return lambda jnp, lax: lambda x: getattr(lax, name)(x, axes)


@pytest.mark.oracle
@pytest.mark.parametrize("name", ARITH)
@pytest.mark.parametrize("dtype", [F32, BF16, I32, U8], ids=str)
def test_arithmetic_reductions_match_jax(oracle: Oracle, name: str, dtype: np.dtype) -> None:
    for shape, axes in AXES_CASES[:4]:
        oracle.check(_reduce(name, axes), data(shape, dtype))


@pytest.mark.oracle
@pytest.mark.parametrize("name", ARITH + LOGICAL)
@pytest.mark.parametrize(("shape", "axes"), AXES_CASES[4:], ids=str)
def test_reductions_over_odd_shapes_match_jax(
    oracle: Oracle, name: str, shape: tuple[int, ...], axes: tuple[int, ...]
) -> None:
    dtype = I32 if name in LOGICAL else F32
    oracle.check(_reduce(name, axes), data(shape, dtype))


@pytest.mark.oracle
@pytest.mark.parametrize("name", LOGICAL)
@pytest.mark.parametrize("dtype", [BOOL, I32, U8], ids=str)
def test_logical_reductions_match_jax(oracle: Oracle, name: str, dtype: np.dtype) -> None:
    for shape, axes in AXES_CASES[:4]:
        oracle.check(_reduce(name, axes), data(shape, dtype, seed=1))


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["reduce_max", "reduce_min"])
def test_max_min_of_bool_match_jax(oracle: Oracle, name: str) -> None:
    oracle.check(_reduce(name, (1,)), data((3, 4), BOOL))


@pytest.mark.oracle
@pytest.mark.parametrize("name", ARITH)
def test_reductions_keep_weak_type(oracle: Oracle, name: str) -> None:
    # The weak input stays weak through the reduction, so adding a Python float keeps f32.
    oracle.check(lambda jnp, lax: lambda x: getattr(lax, name)(x, ()) + 1.5, 2.0)


@pytest.mark.oracle
def test_logical_reduction_of_comparison_matches_jax(oracle: Oracle) -> None:
    oracle.check(lambda jnp, lax: lambda x: lax.reduce_xor(x > 1.0, (0,)), data((4, 3), F32))


@pytest.mark.oracle
def test_reductions_propagate_nan_like_jax(oracle: Oracle) -> None:
    x = np.array([[1.0, np.nan, 3.0], [0.5, 2.0, -1.0]], np.float32)
    oracle.check(lambda jnp, lax: lambda x: (lax.reduce_max(x, (1,)), lax.reduce_min(x, (1,))), x)


@pytest.mark.oracle
@pytest.mark.parametrize(
    ("name", "dtype"), [("reduce_sum", BOOL), ("reduce_prod", BOOL), ("reduce_and", F32)], ids=str
)
def test_reduction_dtype_errors_match_jax(oracle: Oracle, name: str, dtype: np.dtype) -> None:
    message = same_error(oracle, _reduce(name, (0,)), data((2, 3), dtype))
    assert name in message or "logical reduction" in message


@pytest.mark.oracle
@pytest.mark.parametrize("axes", [(2,), (0, 0), (-1,)], ids=str)
def test_reduction_axis_errors_match_jax(oracle: Oracle, axes: tuple[int, ...]) -> None:
    same_error(oracle, _reduce("reduce_sum", axes), data((2, 3), F32))


# argmax / argmin -----------------------------------------------------------------------------


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", [F32, BF16, I32, BOOL], ids=str)
@pytest.mark.parametrize("axis", [0, 1])
def test_index_reductions_match_jax(oracle: Oracle, name: str, dtype: np.dtype, axis: int) -> None:
    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        return lambda x: getattr(lax, name)(x, axis, np.int32)

    oracle.check(program, data((3, 4), dtype, seed=2))


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_index_reductions_pick_first_tie_and_nan(oracle: Oracle, name: str) -> None:
    x = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, np.nan, 5.0, np.nan], [1.0, 1.0, 1.0, 1.0]])
    oracle.check(lambda jnp, lax: lambda x: getattr(lax, name)(x, 1, jnp.int8), x.astype(F32))


@pytest.mark.oracle
def test_argmax_of_weak_scalar_is_strong(oracle: Oracle) -> None:
    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        return lambda x: lax.argmax(lax.broadcast_in_dim(x, (3,), ()), 0, jnp.int32) + 1

    oracle.check(program, 2.0)


@pytest.mark.oracle
def test_argmax_of_empty_axis_errors_like_jax(oracle: Oracle) -> None:
    same_error(oracle, lambda jnp, lax: lambda x: lax.argmax(x, 0, np.int32), data((0, 2), F32))


@pytest.mark.oracle
def test_argmax_with_float_index_dtype_errors_like_jax(oracle: Oracle) -> None:
    same_error(oracle, lambda jnp, lax: lambda x: lax.argmax(x, 0, np.float32), data((2,), F32))


# cumulative reductions -----------------------------------------------------------------------

SCANS = ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"]


@pytest.mark.oracle
@pytest.mark.parametrize("name", SCANS)
@pytest.mark.parametrize("dtype", [F32, BF16, I32], ids=str)
def test_scans_match_jax(oracle: Oracle, name: str, dtype: np.dtype) -> None:
    if name == "cumlogsumexp" and dtype == I32:
        pytest.skip("XLA computes no cumlogsumexp over integers")
    x = data((3, 4), dtype, seed=3)
    oracle.check(lambda jnp, lax: lambda x: getattr(lax, name)(x), x)
    oracle.check(lambda jnp, lax: lambda x: getattr(lax, name)(x, axis=1, reverse=True), x)


@pytest.mark.oracle
@pytest.mark.parametrize("name", SCANS)
def test_scans_of_weak_and_empty_operands_match_jax(oracle: Oracle, name: str) -> None:
    def weak(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        return lambda x: getattr(lax, name)(lax.broadcast_in_dim(x, (3,), ()), 0) * 2.0

    oracle.check(weak, 1.5)
    oracle.check(lambda jnp, lax: lambda x: getattr(lax, name)(x, 1, True), data((2, 0), F32))


@pytest.mark.oracle
@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("cumsum", (data((3,), BOOL), 0)),
        ("cummax", (data((3,), F32), -1)),
        ("cumsum", (data((3,), F32), 1)),
    ],
    ids=["bool", "negative axis", "axis out of range"],
)
def test_scan_errors_match_jax(oracle: Oracle, name: str, args: tuple[Any, int]) -> None:
    x, axis = args
    same_error(oracle, lambda jnp, lax: lambda x: getattr(lax, name)(x, axis), x)


# property: any reduction over any axes of small random arrays ---------------------------------


@st.composite
def _reduction_case(draw: st.DrawFn) -> tuple[str, np.ndarray, tuple[int, ...]]:
    name = draw(st.sampled_from(ARITH + LOGICAL + ["argmax", "argmin"]))
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=ndim, max_size=ndim)))
    dtypes = [BOOL, I32] if name in LOGICAL else [F32, I32, BF16]
    dtype = draw(st.sampled_from(dtypes))
    if name.startswith("arg"):
        axes: tuple[int, ...] = (draw(st.integers(0, ndim - 1)),)
    else:
        axes = tuple(draw(st.permutations(range(ndim)))[: draw(st.integers(0, ndim))])
    return name, data(shape, dtype, seed=draw(st.integers(0, 3))), axes


@pytest.mark.oracle
@settings(derandomize=True, max_examples=25, deadline=None)
@given(case=_reduction_case())
def test_random_reductions_match_jax(
    oracle: Oracle, case: tuple[str, np.ndarray, tuple[int, ...]]
) -> None:
    name, x, axes = case
    if name.startswith("arg"):
        oracle.check(lambda jnp, lax: lambda x: getattr(lax, name)(x, axes[0], jnp.int32), x)
    else:
        oracle.check(_reduce(name, axes), x)
