"""Oracle tests for NumPy indexing: `x[idx]`, `x.at[idx]`, `jnp.take`, `jnp.take_along_axis`.

Every program prints JAX 0.10.2's jaxpr byte for byte (static slices, dynamic slices or one
gather, in JAX's order of fast paths) and computes JAX's numbers, over several dtypes, negative
and out-of-bounds indices, empty results, traced and NumPy index arrays and boolean masks.
Misuse raises JAX's exception type with JAX's message.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

import hypothesis.strategies as st
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings

import lamina_core
from lamina_core.numpy._index_parse import NonConcreteBooleanIndexError
from lamina_core.testing import Oracle, sweep

Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]

F32 = np.dtype(np.float32)
BF16 = np.dtype(ml_dtypes.bfloat16)
I32 = np.dtype(np.int32)
I8 = np.dtype(np.int8)
BOOL = np.dtype(bool)
SETTINGS = settings(derandomize=True, max_examples=15, deadline=None)

pytestmark = pytest.mark.oracle


def data(shape: tuple[int, ...], dtype: np.dtype = F32) -> np.ndarray:
    """Distinct values in row-major order, so any misplaced element shows."""
    values = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    out: np.ndarray = (
        values % 3 == 0 if dtype == BOOL else (values - 5 if dtype.kind == "i" else values)
    )
    return out.astype(dtype)


def ix(*values: int, dtype: Any = np.int32) -> np.ndarray:
    return np.array(values, dtype)


def index_program(index: Any) -> Program:
    return lambda jnp, lax: lambda x: x[index]


def by_name_and_dtype(names: list[str], dtypes: list[np.dtype]) -> list[Any]:
    """A name x dtype sweep: by default every index with the first dtype and every dtype with
    the first index (each index kind and each dtype family runs); the other pairs are `slow`."""
    cases = [(name, dtype) for name in names for dtype in dtypes]
    ids = [f"{name}-{dtype}" for name, dtype in cases]
    first = ids[0]
    shown = {
        i
        for i, (name, dtype) in zip(ids, cases, strict=True)
        if name == names[0] or dtype == dtypes[0]
    }
    return sweep(cases, ids, kind=lambda i: i if i in shown else first)


# --- x[idx] with static indices, every dtype --------------------------------------------------

X2 = (3, 4)
X3 = (2, 3, 4)
STATIC: dict[str, tuple[Any, tuple[int, ...]]] = {
    "int": (1, X2),
    "negative_int": (-1, X2),
    "numpy_int": (np.int32(2), X2),
    "int_pair": ((1, -2), X2),
    "int_to_0d": ((1, 2, 3), X3),
    "slice": (slice(1, 3), X2),
    "slice_open": (slice(None, 2), X2),
    "slice_negative_bounds": (slice(-3, -1), X2),
    "slice_step": (slice(None, None, 2), X2),
    "slice_step_offset": (slice(1, None, 2), (7,)),
    "slice_negative_step": (slice(None, None, -1), X2),
    "slice_negative_step_2": (slice(None, None, -2), (7,)),
    "slice_negative_step_bounds": (slice(5, 1, -2), (7,)),
    "slice_empty": (slice(3, 1), (5,)),
    "slice_empty_negative_step": (slice(1, 3, -1), (5,)),
    "slice_past_end": (slice(2, 10), (5,)),
    "full_slices": ((slice(None), slice(None)), X2),
    "ellipsis": (Ellipsis, X2),
    "empty_tuple": ((), X2),
    "ellipsis_int": ((Ellipsis, 1), X3),
    "int_ellipsis_int": ((1, Ellipsis, 2), X3),
    "newaxis": (None, X2),
    "newaxis_int_newaxis": ((None, 1, Ellipsis, None), X2),
    "newaxis_between": ((slice(None), None, 1), X2),
    "mixed_basic": ((1, slice(None, None, -1), slice(0, 3, 2)), X3),
    "out_of_bounds_clamped": (5, X2),
    "negative_out_of_bounds_clamped": (-7, X2),
    "out_of_bounds_1d": (9, (5,)),
}


@pytest.mark.parametrize(("name", "dtype"), by_name_and_dtype(list(STATIC), [F32, BF16, I32, BOOL]))
def test_static_index_matches_jax(oracle: Oracle, name: str, dtype: np.dtype) -> None:
    index, shape = STATIC[name]
    oracle.check(index_program(index), data(shape, dtype))


# --- x[idx] with arrays, masks and traced indices --------------------------------------------

ADVANCED: dict[str, tuple[Any, tuple[int, ...]]] = {
    "numpy_array": (ix(0, 2, -1), X2),
    "numpy_int64_array": (np.array([0, 2]), X2),
    "numpy_0d_array": (np.array(1), X2),
    "numpy_0d_array_1d": (np.array(-1, np.int8), (5,)),
    "list": (([0, 2], 1), X2),
    "list_and_array": ((ix(0, 1), [1, 2]), X2),
    "two_arrays": ((ix(0, 2), ix(1, 3)), X2),
    "array_then_slice": ((ix(0, 2), slice(1, 3)), X2),
    "slice_then_array": ((slice(1, 3), ix(0, 2)), X2),
    "array_and_int": ((ix(0, 1), -1), X2),
    "array_and_0d_array": ((np.array(1), ix(0, 1)), X2),
    "non_contiguous_arrays": ((ix(0, 1), slice(None), ix(1, 3)), X3),
    "arrays_broadcast": ((ix(0, 1)[:, None], ix(1, 2, 3)), X2),
    "array_2d": (ix(0, 1, 2, 3).reshape(2, 2), (5,)),
    "array_newaxis": ((None, ix(0, 1)), X2),
    "array_strided_slice": ((ix(0, 2), slice(None, None, 2)), X2),
    "array_negative_slice": ((ix(0, 2), slice(None, None, -1)), X2),
    "uint8_array": (ix(0, 2, dtype=np.uint8), X2),
    "empty_array": (np.zeros((0,), np.int32), (5,)),
    "bool_mask": (np.array([[True, False, True, False]] * 3), X2),
    "bool_mask_axis": ((slice(None), np.array([True, False, True, False])), X2),
    "bool_mask_all_false": (np.zeros(3, bool), X2),
    "bool_list": (([True, False, True],), X2),
    "scalar_true": (True, X2),
    "scalar_false": (False, X2),
}


@pytest.mark.parametrize(("name", "dtype"), by_name_and_dtype(list(ADVANCED), [F32, I32]))
def test_advanced_index_matches_jax(oracle: Oracle, name: str, dtype: np.dtype) -> None:
    index, shape = ADVANCED[name]
    oracle.check(index_program(index), data(shape, dtype))


def traced(fn: Callable[..., Any]) -> Program:
    return lambda jnp, lax: fn


TRACED: dict[str, tuple[Program, tuple[Any, ...]]] = {
    "scalar_1d": (traced(lambda x, i: x[i]), (data((5,)), np.int32(-2))),
    "scalar_2d": (traced(lambda x, i: x[i]), (data(X2), np.int32(1))),
    "weak_scalar_1d": (traced(lambda x, i: x[i]), (data((5,)), 2)),
    "weak_scalar_2d": (traced(lambda x, i: x[i]), (data(X2), 2)),
    "int8_scalar_1d": (traced(lambda x, i: x[i]), (data((5,)), np.int8(1))),
    "int8_scalar_2d": (traced(lambda x, i: x[i]), (data(X2), np.int8(1))),
    "uint_scalar": (traced(lambda x, i: x[i]), (data((5,)), np.uint32(1))),
    "two_scalars": (traced(lambda x, i, j: x[i, j]), (data(X2), np.int32(1), np.int32(-1))),
    "scalar_and_slice": (traced(lambda x, i: x[i, 1:3]), (data(X2), np.int32(1))),
    "scalar_and_reversed": (traced(lambda x, i: x[i, ::-1]), (data(X2), np.int32(1))),
    "scalar_and_strided": (traced(lambda x, i: x[i, ::2]), (data(X2), np.int32(1))),
    "newaxis_and_scalar": (traced(lambda x, i: x[None, i]), (data(X2), np.int32(2))),
    "array": (traced(lambda x, i: x[i]), (data(X2), ix(2, 0, -1))),
    "array_and_int": (traced(lambda x, i: x[i, 1]), (data(X2), ix(0, 2))),
    "array_and_strided": (traced(lambda x, i: x[i, ::2]), (data(X2), ix(0, 2))),
    "array_and_reversed": (traced(lambda x, i: x[i, ::-1]), (data(X2), ix(0, 2))),
    "uint_array": (traced(lambda x, i: x[i]), (data(X2), ix(0, 2, dtype=np.uint32))),
    "int8_array": (traced(lambda x, i: x[i]), (data(X2), ix(0, -1, dtype=np.int8))),
    "scalar_and_array": (traced(lambda x, i: x[i, ix(0, 1)]), (data(X2), np.int32(1))),
    "tuple_of_tracers": (
        traced(lambda x, i, j: x[(i, j),]),
        (data((5,)), np.int32(1), np.int32(3)),
    ),
    "index_expression": (traced(lambda x, i: x[i + 1]), (data((5,)), np.int32(1))),
    "bf16_operand": (traced(lambda x, i: x[i, 1:]), (data(X2, BF16), ix(1, 2))),
}


@pytest.mark.parametrize("name", TRACED)
def test_traced_index_matches_jax(oracle: Oracle, name: str) -> None:
    program, args = TRACED[name]
    oracle.check(program, *args)


# --- x.at[idx].get with modes and options ----------------------------------------------------

GET: dict[str, tuple[Program, tuple[Any, ...]]] = {
    "fill_static": (traced(lambda x: x.at[5].get(mode="fill")), (data(X2),)),
    "fill_value": (traced(lambda x: x.at[5].get(mode="fill", fill_value=-1)), (data(X2, I32),)),
    "fill_slice": (traced(lambda x: x.at[1:3].get(mode="fill")), (data(X2),)),
    "fill_traced": (traced(lambda x, i: x.at[i].get(mode="fill", fill_value=0)), (data(X2), 1)),
    "fill_array": (traced(lambda x, i: x.at[i].get(mode="fill")), (data(X2), ix(1, 5, -1))),
    "fill_int_default": (traced(lambda x, i: x.at[i].get(mode="fill")), (data(X2, I32), ix(7))),
    "fill_bool_default": (traced(lambda x, i: x.at[i].get(mode="fill")), (data(X2, BOOL), ix(7))),
    "fill_numpy_fill_value": (
        traced(lambda x, i: x.at[i].get(mode="fill", fill_value=np.float32(2.5))),
        (data(X2), ix(1, 9)),
    ),
    "clip_static": (traced(lambda x: x.at[5].get(mode="clip")), (data(X2),)),
    "clip_traced": (traced(lambda x, i: x.at[i].get(mode="clip")), (data(X2), np.int32(1))),
    "clip_array": (traced(lambda x, i: x.at[i].get(mode="clip")), (data(X2), ix(1, 5, -9))),
    "promise": (
        traced(lambda x, i: x.at[i].get(mode="promise_in_bounds")),
        (data(X2), ix(1, 2)),
    ),
    "no_wrap_array": (
        traced(lambda x, i: x.at[i].get(wrap_negative_indices=False)),
        (data(X2), ix(1, 2)),
    ),
    "no_wrap_scalar": (
        traced(lambda x, i: x.at[i].get(wrap_negative_indices=False)),
        (data(X2), np.int32(1)),
    ),
    "no_wrap_static": (traced(lambda x: x.at[-1].get(wrap_negative_indices=False)), (data(X2),)),
    "promises": (
        traced(lambda x, i: x.at[i].get(unique_indices=True, indices_are_sorted=True)),
        (data(X2), ix(0, 2)),
    ),
    "empty_result": (traced(lambda x: x.at[np.zeros(0, np.int32)].get(mode="fill")), (data(X2),)),
}


@pytest.mark.parametrize("name", GET)
def test_indexed_get_matches_jax(oracle: Oracle, name: str) -> None:
    program, args = GET[name]
    oracle.check(program, *args)


# --- x.at[idx].set/add/... -------------------------------------------------------------------


def update(method: str, index: Any, value: Any, **kwargs: Any) -> Program:
    return lambda jnp, lax: lambda x: getattr(x.at[index], method)(value, **kwargs)


UPDATES: dict[str, tuple[Program, tuple[Any, ...]]] = {
    "set_int": (update("set", 1, 7.0), (data(X2),)),
    "set_negative": (update("set", -1, 7.0), (data(X2),)),
    "set_pair": (update("set", (1, 2), 7), (data(X2, I32),)),
    "set_slice": (update("set", (slice(None), slice(1, 3)), 0.0), (data(X2),)),
    "set_row_values": (update("set", 0, np.arange(4, dtype=np.float32)), (data(X2),)),
    "set_broadcast_values": (update("set", slice(0, 2), np.ones((1, 4), np.float32)), (data(X2),)),
    "set_array": (update("set", ix(0, 2), 1.0), (data(X2),)),
    "set_bool_mask": (update("set", np.array([True, False, True]), 0.0), (data(X2),)),
    "set_scalar_bool": (update("set", True, 0.0), (data(X2),)),
    "set_empty": (update("set", slice(1, 1), 5.0), (data(X2),)),
    "set_weak_into_f32": (update("set", 0, 2), (data(X2),)),
    "set_f64_into_f32": (update("set", 0, np.float64(2)), (data(X2),)),
    "set_i32_into_f32": (update("set", 0, np.ones(4, np.int32)), (data(X2),)),
    "set_bool_into_i32": (update("set", 0, True), (data(X2, I32),)),
    "set_into_bf16": (update("set", (slice(None), 0), 3.0), (data(X2, BF16),)),
    "set_into_bool": (update("set", ix(1), False), (data(X2, BOOL),)),
    "set_newaxis": (update("set", (None, 1), np.ones((1, 4), np.float32)), (data(X2),)),
    "set_strided": (update("set", slice(None, None, 2), -1.0), (data((7,)),)),
    "set_reversed": (
        update("set", slice(None, None, -1), np.arange(5.0, dtype=np.float32)),
        (data((5,)),),
    ),
    "set_drop_out_of_bounds": (update("set", ix(0, 9), 1.0), (data(X2),)),
    "set_clip": (update("set", ix(0, 9), 1.0, mode="clip"), (data(X2),)),
    "set_promise": (update("set", ix(0, 2), 1.0, mode="promise_in_bounds"), (data(X2),)),
    "set_no_wrap": (update("set", ix(0, -1), 1.0, wrap_negative_indices=False), (data(X2),)),
    "add_int": (update("add", 0, 1.0), (data(X2),)),
    "add_repeated": (update("add", ix(0, 0, 2), 1), (data((4,), I32),)),
    "add_reversed": (update("add", slice(None, None, -1), 1.0), (data(X2),)),
    "add_newaxis": (update("add", (None, 1), np.ones((1, 4), np.float32)), (data(X2),)),
    "add_clip": (update("add", ix(1, 7), 1.0, mode="clip"), (data(X2),)),
    "add_twice": (
        traced(lambda x: x.at[0].add(1.0).at[1].add(2.0)),
        (data(X2),),
    ),
    "subtract": (update("subtract", 1, 3.0), (data(X2),)),
    "multiply": (update("multiply", ix(0, 0), 3), (data(X2, I32),)),
    "mul_alias": (update("mul", 1, 0.5), (data(X2),)),
    "divide": (update("divide", 1, 4.0), (data(X2),)),
    "power": (update("power", 1, 2.0), (data(X2),)),
    "min": (update("min", (slice(None), 1), 2.0), (data(X2),)),
    "max": (update("max", ix(2, 2), 100), (data(X2, I32),)),
    "max_bool": (update("max", 0, True), (data(X2, BOOL),)),
    "min_bf16": (update("min", 1, 1.0), (data(X2, BF16),)),
    "apply": (traced(lambda x: x.at[ix(0, 0, 2)].apply(lambda v: v * 2.0)), (data((4,)),)),
    "apply_twice": (
        traced(lambda x: x.at[0].apply(abs).at[1].apply(abs)),
        (data(X2),),
    ),
}


@pytest.mark.parametrize("name", UPDATES)
def test_indexed_update_matches_jax(oracle: Oracle, name: str) -> None:
    program, args = UPDATES[name]
    oracle.check(program, *args)


TRACED_UPDATES: dict[str, tuple[Program, tuple[Any, ...]]] = {
    "set_traced_scalar": (traced(lambda x, i: x.at[i].set(0.0)), (data(X2), np.int32(-1))),
    "set_traced_array": (
        traced(lambda x, i, u: x.at[i].set(u)),
        (data(X2), ix(0, 2), np.ones((2, 4), np.float32)),
    ),
    "add_traced_values": (
        traced(lambda x, u: x.at[1:, ::2].add(u)),
        (data(X2), np.ones((2, 2), np.float32)),
    ),
    "add_traced_index_and_values": (
        traced(lambda x, i, u: x.at[i, 1].add(u)),
        (data(X2), ix(0, 0, 2), np.ones(3, np.float32)),
    ),
    "min_traced_scalar_index": (
        traced(lambda x, i, u: x.at[:, i].min(u)),
        (data(X2), np.int32(2), np.zeros(3, np.float32)),
    ),
    "set_weak_traced_value": (traced(lambda x, u: x.at[0].set(u)), (data(X2), 3.0)),
}


@pytest.mark.parametrize("name", TRACED_UPDATES)
def test_traced_indexed_update_matches_jax(oracle: Oracle, name: str) -> None:
    program, args = TRACED_UPDATES[name]
    oracle.check(program, *args)


# --- take and take_along_axis ------------------------------------------------------------------

TAKE: dict[str, tuple[Program, tuple[Any, ...]]] = {
    "axis_none": (lambda jnp, lax: lambda x, i: jnp.take(x, i), (data(X2), ix(0, 11, -1))),
    "axis_0": (lambda jnp, lax: lambda x, i: jnp.take(x, i, axis=0), (data(X2), ix(2, 0))),
    "axis_1": (lambda jnp, lax: lambda x, i: jnp.take(x, i, axis=1), (data(X2), ix(0, 3))),
    "axis_negative": (
        lambda jnp, lax: lambda x, i: jnp.take(x, i, axis=-1),
        (data(X3, I32), ix(1, 2)),
    ),
    "indices_2d": (
        lambda jnp, lax: lambda x, i: jnp.take(x, i, axis=1),
        (data(X2), ix(0, 1, 2, 3).reshape(2, 2)),
    ),
    "scalar_index": (lambda jnp, lax: lambda x, i: jnp.take(x, i, axis=0), (data(X2), np.int32(1))),
    "out_of_bounds_fill": (
        lambda jnp, lax: lambda x, i: jnp.take(x, i, axis=0),
        (data(X2), ix(1, 3, -4)),
    ),
    "fill_value": (
        lambda jnp, lax: lambda x, i: jnp.take(x, i, axis=0, fill_value=-1),
        (data(X2, I32), ix(1, 3)),
    ),
    "clip": (
        lambda jnp, lax: lambda x, i: jnp.take(x, i, axis=0, mode="clip"),
        (data(X2), ix(0, 3)),
    ),
    "wrap": (
        lambda jnp, lax: lambda x, i: jnp.take(x, i, axis=0, mode="wrap"),
        (data(X2), ix(0, 4, -1)),
    ),
    "empty_indices": (
        lambda jnp, lax: lambda x, i: jnp.take(x, i, axis=1),
        (data(X2), np.zeros(0, np.int32)),
    ),
    "numpy_indices": (lambda jnp, lax: lambda x: jnp.take(x, ix(1, 0), axis=1), (data(X2),)),
    "bf16": (lambda jnp, lax: lambda x, i: jnp.take(x, i), (data(X2, BF16), ix(5))),
    "along_axis_1": (
        lambda jnp, lax: lambda x, i: jnp.take_along_axis(x, i, axis=1),
        (data(X2), np.array([[0, 3]] * 3, np.int32)),
    ),
    "along_axis_0_broadcast": (
        lambda jnp, lax: lambda x, i: jnp.take_along_axis(x, i, axis=0),
        (data(X2), np.array([[0, 2, 1, 0]], np.int32)),
    ),
    "along_axis_negative_indices": (
        lambda jnp, lax: lambda x, i: jnp.take_along_axis(x, i, axis=-1),
        (data(X3), -np.ones((2, 3, 1), np.int32)),
    ),
    "along_axis_none": (
        lambda jnp, lax: lambda x, i: jnp.take_along_axis(x, i, axis=None),
        (data(X2), ix(0, 11, 5)),
    ),
    "along_axis_out_of_bounds": (
        lambda jnp, lax: lambda x, i: jnp.take_along_axis(x, i, axis=1),
        (data(X2, I32), np.array([[0, 9]] * 3, np.int32)),
    ),
    "along_axis_clip": (
        lambda jnp, lax: lambda x, i: jnp.take_along_axis(x, i, axis=1, mode="clip"),
        (data(X2), np.array([[0, 9]] * 3, np.int32)),
    ),
    "along_axis_promise": (
        lambda jnp, lax: lambda x, i: jnp.take_along_axis(x, i, 1, mode="promise_in_bounds"),
        (data(X2), np.array([[0, 3]] * 3, np.int32)),
    ),
    "along_axis_int8": (
        lambda jnp, lax: lambda x, i: jnp.take_along_axis(x, i, axis=0),
        (data(X2), np.array([[0, 2, 1, -1]], np.int8)),
    ),
    "along_axis_argsort": (
        lambda jnp, lax: lambda x: jnp.take_along_axis(x, jnp.argsort(x, axis=1), axis=1),
        (data(X2)[:, ::-1].copy(),),
    ),
}


@pytest.mark.parametrize("name", TAKE)
def test_take_matches_jax(oracle: Oracle, name: str) -> None:
    program, args = TAKE[name]
    oracle.check(program, *args)


# --- hypothesis: random basic and advanced indices ------------------------------------------


@st.composite
def basic_indices(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[Any, ...]]:
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    index: list[Any] = []
    for size in shape[: draw(st.integers(0, len(shape)))]:
        kind = draw(st.sampled_from(["int", "slice", "none"]))
        if kind == "int":
            index.append(draw(st.integers(-size, size - 1)))
        elif kind == "slice":
            bound = st.none() | st.integers(-size - 2, size + 2)
            step = draw(st.none() | st.sampled_from([-3, -2, -1, 1, 2, 3]))
            index.append(slice(draw(bound), draw(bound), step))
        else:
            index.extend([None, slice(None)])
    if draw(st.booleans()):
        index.insert(draw(st.integers(0, len(index))), Ellipsis)
    return shape, tuple(index)


@SETTINGS
@given(case=basic_indices())
def test_random_basic_index_matches_jax(
    oracle: Oracle, case: tuple[tuple[int, ...], tuple[Any, ...]]
) -> None:
    shape, index = case
    oracle.check(index_program(index), data(shape))


@st.composite
def advanced_indices(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[Any, ...]]:
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    index: list[Any] = []
    for size in shape:
        kind = draw(st.sampled_from(["array", "int", "slice"]))
        if kind == "array":
            n = draw(st.integers(0, 3))
            values = draw(st.lists(st.integers(-size, size - 1), min_size=n, max_size=n))
            index.append(np.array(values, np.int32))
        elif kind == "int":
            index.append(draw(st.integers(-size, size - 1)))
        else:
            index.append(slice(None, None, draw(st.sampled_from([1, 2, -1]))))
    return shape, tuple(index)


@SETTINGS
@given(case=advanced_indices(), method=st.sampled_from(["get", "set", "add"]))
def test_random_advanced_index_and_update_match_jax(
    oracle: Oracle, case: tuple[tuple[int, ...], tuple[Any, ...]], method: str
) -> None:
    shape, index = case
    arrays = [np.shape(i) for i in index if isinstance(i, np.ndarray)]
    if len({s for s in arrays}) > 1:
        return  # arrays of different lengths do not broadcast
    if method == "get":
        oracle.check(index_program(index), data(shape))
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            oracle.check(update(method, index, 2.0), data(shape))


# --- errors ------------------------------------------------------------------------------------


def same_error(oracle: Oracle, program: Program, *args: Any) -> str:
    """Both reject the program with an exception of the same name and message (its first
    line; JAX's own exception classes have Lamina twins of the same name)."""
    with pytest.raises(Exception) as theirs:
        oracle.jax.make_jaxpr(program(oracle.jnp, oracle.lax))(*args)
    with pytest.raises(Exception) as ours:
        lamina_core.make_jaxpr(program(lamina_core.numpy, lamina_core.lax))(*args)
    assert type(ours.value).__name__ == type(theirs.value).__name__, ours.value
    first_lines = str(theirs.value).splitlines()[0], str(ours.value).splitlines()[0]
    # A tracer in the message prints as each library prints its tracers.
    if "JitTracer(" not in first_lines[0]:
        assert first_lines[0] == first_lines[1]
    return str(ours.value)


ERRORS: dict[str, tuple[Program, tuple[Any, ...]]] = {
    "too_many_indices": (index_program((1, 2, 3)), (data(X2),)),
    "two_ellipses": (index_program((Ellipsis, Ellipsis)), (data(X2),)),
    "float_index": (index_program(1.0), (data(X2),)),
    "float_array_index": (index_program(np.array([1.0])), (data(X2),)),
    "float_list_index": (index_program(([1.5],)), (data(X2),)),
    "string_index": (index_program("a"), (data(X2),)),
    "object_index": (index_program(object), (data(X2),)),
    "list_as_tuple": (index_program([0, 1]), (data(X2),)),
    "list_of_slices": (index_program([slice(None), 1]), (data(X2),)),
    "traced_float_index": (traced(lambda x, i: x[i]), (data(X2), np.float32(1))),
    "traced_bool_mask": (traced(lambda x: x[x > 3.0]), (data(X2),)),
    "list_of_tracers": (traced(lambda x, i, j: x[[i, j]]), (data((5,)), np.int32(1), np.int32(3))),
    "index_into_empty_axis": (index_program((slice(None), 0)), (np.zeros((3, 0), np.float32),)),
    "traced_index_into_empty_axis": (traced(lambda x, i: x[i]), (np.zeros((0, 3)), np.int32(0))),
    "bool_mask_shape": (index_program(np.array([True, False])), (data(X2),)),
    "take_empty_axis": (lambda jnp, lax: lambda x: jnp.take(x, ix(0), axis=0), (np.zeros((0, 2)),)),
    "take_bad_mode": (lambda jnp, lax: lambda x: jnp.take(x, ix(0), mode="nope"), (data(X2),)),
    "take_along_axis_float": (
        lambda jnp, lax: lambda x: jnp.take_along_axis(x, np.zeros((3, 1)), axis=1),
        (data(X2),),
    ),
    "take_along_axis_rank": (
        lambda jnp, lax: lambda x: jnp.take_along_axis(x, ix(0), axis=1),
        (data(X2),),
    ),
    "fill_value_not_scalar": (
        traced(lambda x: x.at[ix(0)].get(mode="fill", fill_value=np.zeros(2))),
        (data(X2),),
    ),
    "unknown_mode": (traced(lambda x: x.at[ix(0)].get(mode="nope")), (data(X2),)),
}


@pytest.mark.parametrize("name", ERRORS)
def test_bad_index_raises_jax_error(oracle: Oracle, name: str) -> None:
    program, args = ERRORS[name]
    same_error(oracle, program, *args)


def test_traced_slice_bound_is_an_error_as_in_jax(oracle: Oracle) -> None:
    message = same_error(oracle, traced(lambda x, i: x[i:]), data((5,)), np.int32(1))
    assert message.startswith("Slice entries must be static integers. Got slice(JitTracer(int32[])")


def test_traced_bool_mask_error_names_the_mask_type() -> None:
    with pytest.raises(NonConcreteBooleanIndexError, match=r"concrete; got bool\[3,4\]"):
        lamina_core.make_jaxpr(lambda x: x[x > 3.0])(data(X2))


def test_static_out_of_bounds_index_is_an_error_when_checked(oracle: Oracle) -> None:
    program = index_program((0, 7))
    with lamina_core.config(jax_check_static_indices=True), pytest.raises(IndexError) as ours:
        lamina_core.make_jaxpr(program(lamina_core.numpy, lamina_core.lax))(data(X2))
    oracle.jax.config.update("jax_check_static_indices", True)
    try:
        with pytest.raises(IndexError) as theirs:
            oracle.jax.make_jaxpr(program(oracle.jnp, oracle.lax))(data(X2))
    finally:
        oracle.jax.config.update("jax_check_static_indices", False)
    assert str(ours.value) == str(theirs.value)
    assert "index 7 out of bounds for axis 1 with size 4" in str(ours.value)


def test_unsafe_update_cast_warns_as_jax_does(oracle: Oracle) -> None:
    program = update("set", 0, 1.5)
    with pytest.warns(FutureWarning, match="cannot safely cast value from dtype=float32"):
        lamina_core.make_jaxpr(program(lamina_core.numpy, lamina_core.lax))(data(X2, I32))
    with pytest.warns(FutureWarning):
        oracle.jax.make_jaxpr(program(oracle.jnp, oracle.lax))(data(X2, I32))


# --- eager evaluation (NumPy reference) ---------------------------------------------------------


def test_indexing_evaluates_eagerly_with_the_reference_evaluator() -> None:
    x = data(X2)
    got = lamina_core.make_jaxpr(lambda a: (a[1:, ::-1], a.at[0].add(1.0), a[ix(0, 2)]))(x)
    outs = lamina_core.eval_jaxpr(got.jaxpr, got.consts, x)
    np.testing.assert_array_equal(outs[0], x[1:, ::-1])
    np.testing.assert_array_equal(outs[1], np.concatenate([x[:1] + 1, x[1:]]))
    np.testing.assert_array_equal(outs[2], x[[0, 2]])
