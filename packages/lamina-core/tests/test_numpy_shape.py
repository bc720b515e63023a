"""Oracle tests for the jax.numpy shape functions and array methods.

Each program prints JAX 0.10.2's jaxpr byte for byte and computes JAX's numbers, over f32,
bf16, i32 and bool arrays, negative axes, `-1` in reshape, 0-d and empty arrays and weakly
typed inputs, including the functions JAX stages inside a nested `jit` (flip, roll, atleast_*d
and the h/v/dstack built on them).
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
from lamina_core import numpy as lnp
from lamina_core.testing import Oracle, sweep

Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]

F32 = np.dtype(np.float32)
BF16 = np.dtype(ml_dtypes.bfloat16)
I32 = np.dtype(np.int32)
BOOL = np.dtype(bool)
DTYPES = [F32, BF16, I32, BOOL]
SETTINGS = settings(derandomize=True, max_examples=12, deadline=None)


def data(shape: tuple[int, ...], dtype: np.dtype = F32) -> np.ndarray:
    """Distinct values in row-major order, so any misplaced element shows."""
    values = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    out: np.ndarray = (
        values % 3 == 0 if dtype == BOOL else (values - 5 if dtype.kind == "i" else values)
    )
    return out.astype(dtype)


def same_error(oracle: Oracle, program: Program, *args: Any) -> str:
    """Both reject the program with an exception of the same name (JAX's own classes, such as
    ConcretizationTypeError, have Lamina twins); Lamina's message holds JAX's first line."""
    with pytest.raises(Exception) as theirs:
        oracle.jax.make_jaxpr(program(oracle.jnp, oracle.lax))(*args)
    with pytest.raises(Exception) as ours:
        lamina_core.make_jaxpr(program(lamina_core.numpy, lamina_core.lax))(*args)
    assert type(ours.value).__name__ == type(theirs.value).__name__, ours.value
    assert str(theirs.value).splitlines()[0] in str(ours.value)
    return str(ours.value)


def _n(fn: Callable[[ModuleType], Callable[..., Any]]) -> Program:
    """A program that only needs `jnp`."""
    return lambda jnp, lax: fn(jnp)


# --- one array, every dtype ------------------------------------------------------------------

UNARY: dict[str, tuple[Program, tuple[int, ...]]] = {
    "reshape": (_n(lambda jnp: lambda x: jnp.reshape(x, (6, 4))), (2, 3, 4)),
    "reshape_minus_one": (_n(lambda jnp: lambda x: jnp.reshape(x, (-1, 4))), (2, 3, 4)),
    "reshape_int": (_n(lambda jnp: lambda x: jnp.reshape(x, -1)), (2, 3)),
    "reshape_order_f": (_n(lambda jnp: lambda x: jnp.reshape(x, (4, -1), order="F")), (2, 3, 4)),
    "reshape_same": (_n(lambda jnp: lambda x: jnp.reshape(x, (2, 3))), (2, 3)),
    "reshape_0d": (_n(lambda jnp: lambda x: jnp.reshape(x, (1, -1))), ()),
    "reshape_empty": (_n(lambda jnp: lambda x: jnp.reshape(x, (-1, 2))), (0, 4)),
    "ravel": (_n(lambda jnp: lambda x: jnp.ravel(x)), (2, 3, 4)),
    "ravel_order_f": (_n(lambda jnp: lambda x: jnp.ravel(x, order="F")), (2, 3)),
    "ravel_0d": (_n(lambda jnp: lambda x: jnp.ravel(x)), ()),
    "transpose": (_n(lambda jnp: lambda x: jnp.transpose(x)), (2, 3, 4)),
    "transpose_axes": (_n(lambda jnp: lambda x: jnp.transpose(x, (1, -1, 0))), (2, 3, 4)),
    "transpose_1d": (_n(lambda jnp: lambda x: jnp.transpose(x)), (3,)),
    "moveaxis": (_n(lambda jnp: lambda x: jnp.moveaxis(x, 0, -1)), (2, 3, 4)),
    "moveaxis_several": (_n(lambda jnp: lambda x: jnp.moveaxis(x, (0, 1), (-1, 0))), (2, 3, 4)),
    "moveaxis_identity": (_n(lambda jnp: lambda x: jnp.moveaxis(x, 1, -2)), (2, 3, 4)),
    "swapaxes": (_n(lambda jnp: lambda x: jnp.swapaxes(x, 0, -1)), (2, 3, 4)),
    "expand_dims": (_n(lambda jnp: lambda x: jnp.expand_dims(x, -1)), (2, 3)),
    "expand_dims_several": (_n(lambda jnp: lambda x: jnp.expand_dims(x, (0, 3))), (2, 3)),
    "expand_dims_0d": (_n(lambda jnp: lambda x: jnp.expand_dims(x, 0)), ()),
    "squeeze_all": (_n(lambda jnp: lambda x: jnp.squeeze(x)), (1, 3, 1)),
    "squeeze_axis": (_n(lambda jnp: lambda x: jnp.squeeze(x, -1)), (1, 3, 1)),
    "squeeze_nothing": (_n(lambda jnp: lambda x: jnp.squeeze(x)), (2, 3)),
    "concatenate_axis_none": (_n(lambda jnp: lambda x: jnp.concatenate([x, x], axis=None)), (2, 3)),
    "concatenate_of_an_array": (_n(lambda jnp: lambda x: jnp.concatenate(x, axis=-1)), (2, 3, 4)),
    "concatenate_of_an_array_flat": (_n(lambda jnp: lambda x: jnp.concatenate(x, None)), (2, 3)),
    "concatenate_one": (_n(lambda jnp: lambda x: jnp.concatenate([x])), (2, 3)),
    "stack": (_n(lambda jnp: lambda x: jnp.stack([x, x], axis=-1)), (2, 3)),
    "stack_of_an_array": (_n(lambda jnp: lambda x: jnp.stack(x, 1)), (2, 3, 4)),
    "stack_0d": (_n(lambda jnp: lambda x: jnp.stack([x, x])), ()),
    "split": (_n(lambda jnp: lambda x: jnp.split(x, 2, axis=-1)), (2, 4)),
    "split_at_indices": (_n(lambda jnp: lambda x: jnp.split(x, [1, 3], axis=1)), (2, 4)),
    "split_at_array_indices": (_n(lambda jnp: lambda x: jnp.split(x, np.array([2]))), (3, 2)),
    "array_split": (_n(lambda jnp: lambda x: jnp.array_split(x, 3, axis=-1)), (2, 4)),
    "broadcast_to": (_n(lambda jnp: lambda x: jnp.broadcast_to(x, (5, 2, 3))), (2, 3)),
    "broadcast_to_stretch": (_n(lambda jnp: lambda x: jnp.broadcast_to(x, (2, 4, 3))), (2, 1, 3)),
    "broadcast_to_same": (_n(lambda jnp: lambda x: jnp.broadcast_to(x, (2, 3))), (2, 3)),
    "broadcast_to_int": (_n(lambda jnp: lambda x: jnp.broadcast_to(x, 3)), ()),
    "tile": (_n(lambda jnp: lambda x: jnp.tile(x, (2, 1))), (2, 3)),
    "tile_more_reps": (_n(lambda jnp: lambda x: jnp.tile(x, (2, 1, 3))), (2, 3)),
    "tile_int": (_n(lambda jnp: lambda x: jnp.tile(x, 2)), (2, 3)),
    "tile_0d": (_n(lambda jnp: lambda x: jnp.tile(x, 3)), ()),
    "repeat": (_n(lambda jnp: lambda x: jnp.repeat(x, 2, axis=1)), (2, 3)),
    "repeat_negative_axis": (_n(lambda jnp: lambda x: jnp.repeat(x, 3, axis=-2)), (2, 3)),
    "repeat_flat": (_n(lambda jnp: lambda x: jnp.repeat(x, 2)), (2, 3)),
    "repeat_0d": (_n(lambda jnp: lambda x: jnp.repeat(x, 3)), ()),
    "repeat_zero": (_n(lambda jnp: lambda x: jnp.repeat(x, 0, axis=0)), (2, 3)),
    "repeat_0d_along_axis": (_n(lambda jnp: lambda x: jnp.repeat(x, 3, axis=0)), ()),
}


def _unary_sweep() -> list[Any]:
    """Every case in float32 and the first case of each function (the first word of its name)
    in int32 by default; every case in all of DTYPES with the slow tests."""
    cases = [(name, dtype) for name in UNARY for dtype in DTYPES]
    ids = [f"{name}-{dtype}" for name, dtype in cases]
    functions: set[str] = set()
    shown = set()
    for case_id, (name, dtype) in zip(ids, cases, strict=True):
        if dtype == F32:
            shown.add(case_id)
        elif dtype == I32 and name.split("_")[0] not in functions:
            functions.add(name.split("_")[0])
            shown.add(case_id)
    return sweep(cases, ids, kind=lambda i: i if i in shown else ids[0])


@pytest.mark.oracle
@pytest.mark.parametrize(("name", "dtype"), _unary_sweep())
def test_shape_function_matches_jax(oracle: Oracle, name: str, dtype: np.dtype) -> None:
    program, shape = UNARY[name]
    oracle.check(program, data(shape, dtype))


METHODS: dict[str, tuple[Program, tuple[int, ...]]] = {
    "reshape_varargs": (_n(lambda jnp: lambda x: x.reshape(4, 6)), (2, 3, 4)),
    "reshape_tuple": (_n(lambda jnp: lambda x: x.reshape((4, -1))), (2, 3, 4)),
    "reshape_order_f": (_n(lambda jnp: lambda x: x.reshape(3, 2, order="F")), (2, 3)),
    "T": (_n(lambda jnp: lambda x: x.T), (2, 3, 4)),
    "transpose": (_n(lambda jnp: lambda x: x.transpose()), (2, 3)),
    "transpose_varargs": (_n(lambda jnp: lambda x: x.transpose(1, 0, 2)), (2, 3, 4)),
    "transpose_tuple": (_n(lambda jnp: lambda x: x.transpose((2, 0, 1))), (2, 3, 4)),
    "squeeze": (_n(lambda jnp: lambda x: x.squeeze()), (1, 3, 1)),
    "squeeze_axis": (_n(lambda jnp: lambda x: x.squeeze(0)), (1, 3, 1)),
    "ravel": (_n(lambda jnp: lambda x: x.ravel()), (2, 3)),
    "flatten": (_n(lambda jnp: lambda x: x.flatten()), (2, 3, 4)),
    "swapaxes": (_n(lambda jnp: lambda x: x.swapaxes(0, 1)), (2, 3)),
    "repeat": (_n(lambda jnp: lambda x: x.repeat(2, axis=0)), (2, 3)),
}


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", [F32, I32], ids=str)
@pytest.mark.parametrize("name", METHODS)
def test_array_method_matches_jax(oracle: Oracle, name: str, dtype: np.dtype) -> None:
    program, shape = METHODS[name]
    oracle.check(program, data(shape, dtype))


# --- several arrays and promotion --------------------------------------------------------------

MULTI: dict[str, tuple[Program, list[Any]]] = {
    "concatenate": (
        _n(lambda jnp: lambda x, y: jnp.concatenate([x, y], axis=-1)),
        [data((2, 3)), data((2, 1))],
    ),
    "concatenate_promotes": (
        _n(lambda jnp: lambda x, y: jnp.concatenate([x, y])),
        [data((2, 3), I32), data((1, 3), BF16)],
    ),
    "concatenate_dtype": (
        _n(lambda jnp: lambda x, y: jnp.concatenate([x, y], dtype=jnp.int32)),
        [data((2, 3)), data((1, 3), BOOL)],
    ),
    "concatenate_empty": (
        _n(lambda jnp: lambda x, y: jnp.concatenate([x, y], 1)),
        [data((2, 0)), data((2, 3))],
    ),
    "concatenate_constant": (
        _n(lambda jnp: lambda x: jnp.concatenate([x, np.ones((1, 3), np.float32)])),
        [data((2, 3))],
    ),
    "stack_promotes_weak": (_n(lambda jnp: lambda x, s: jnp.stack([x, s])), [np.float32(2), 1]),
    "stack_dtype": (
        _n(lambda jnp: lambda x, y: jnp.stack([x, y], dtype=jnp.bfloat16)),
        [data((3,)), data((3,), I32)],
    ),
    "broadcast_arrays": (
        _n(lambda jnp: lambda x, y: jnp.broadcast_arrays(x, y)),
        [data((2, 3)), data((3, 1, 1), I32)],
    ),
    "broadcast_arrays_same": (
        _n(lambda jnp: lambda x, y: jnp.broadcast_arrays(x, y)),
        [data((2, 3)), data((2, 3))],
    ),
    "broadcast_arrays_weak": (
        _n(lambda jnp: lambda x, s: jnp.broadcast_arrays(x, s)),
        [data((2, 3), BF16), 1.5],
    ),
    "broadcast_to_weak": (
        _n(lambda jnp: lambda s, x: jnp.broadcast_to(s, (3,)) * x),
        [2, data((3,), BF16)],
    ),
    "reshape_weak": (
        _n(lambda jnp: lambda s, x: jnp.reshape(s, (1,)) * x),
        [2.5, data((1,), BF16)],
    ),
    "expand_dims_weak": (
        _n(lambda jnp: lambda s, x: jnp.expand_dims(s, 0) + x),
        [2, data((2,), BF16)],
    ),
    "tile_weak": (_n(lambda jnp: lambda s, x: jnp.tile(s, 2) * x), [0.5, data((2,), BF16)]),
    "numpy_argument_reshape_stays_numpy": (
        _n(lambda jnp: lambda x: (jnp.reshape(np.arange(6.0), (2, 3)), x)),
        [data((2,))],
    ),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", MULTI)
def test_multi_argument_function_matches_jax(oracle: Oracle, name: str) -> None:
    program, args = MULTI[name]
    oracle.check(program, *args)


# --- functions JAX stages in a nested jit -------------------------------------------------------

JIT_WRAPPED: dict[str, tuple[Program, list[Any]]] = {
    "flip": (_n(lambda jnp: lambda x: jnp.flip(x)), [data((2, 3, 4))]),
    "flip_axes": (_n(lambda jnp: lambda x: jnp.flip(x, (0, -1))), [data((2, 3, 4), BF16)]),
    "fliplr": (_n(lambda jnp: lambda x: jnp.fliplr(x)), [data((2, 3), I32)]),
    "flipud": (_n(lambda jnp: lambda x: jnp.flipud(x)), [data((2, 3), BOOL)]),
    "roll": (_n(lambda jnp: lambda x: jnp.roll(x, 1, axis=-1)), [data((2, 3, 4))]),
    "roll_flat": (_n(lambda jnp: lambda x: jnp.roll(x, -5)), [data((2, 3, 4), I32)]),
    "roll_several": (_n(lambda jnp: lambda x: jnp.roll(x, (1, -1), (0, 2))), [data((2, 3, 4))]),
    "roll_broadcast_shift": (_n(lambda jnp: lambda x: jnp.roll(x, 7, (0, 1))), [data((2, 3))]),
    "roll_empty": (_n(lambda jnp: lambda x: jnp.roll(x, 1, 0)), [data((0, 3))]),
    "atleast_1d": (_n(lambda jnp: lambda x: jnp.atleast_1d(x)), [np.float32(3)]),
    "atleast_1d_weak": (_n(lambda jnp: lambda x: jnp.atleast_1d(x)), [1.5]),
    "atleast_1d_already": (_n(lambda jnp: lambda x: jnp.atleast_1d(x)), [data((2, 3))]),
    "atleast_1d_several": (
        _n(lambda jnp: lambda x, y: jnp.atleast_1d(x, y)),
        [np.int32(1), data((2,))],
    ),
    "atleast_2d": (_n(lambda jnp: lambda x: jnp.atleast_2d(x)), [data((3,), BF16)]),
    "atleast_2d_0d": (_n(lambda jnp: lambda x: jnp.atleast_2d(x)), [np.float32(3)]),
    "atleast_3d_0d": (_n(lambda jnp: lambda x: jnp.atleast_3d(x)), [np.float32(3)]),
    "atleast_3d_1d": (_n(lambda jnp: lambda x: jnp.atleast_3d(x)), [data((3,), I32)]),
    "atleast_3d_2d": (_n(lambda jnp: lambda x: jnp.atleast_3d(x)), [data((2, 3))]),
    "atleast_3d_several": (
        _n(lambda jnp: lambda x, y: jnp.atleast_3d(x, y)),
        [data((3,)), data((2, 3, 4), I32)],
    ),
    "atleast_2d_several": (_n(lambda jnp: lambda x, y: jnp.atleast_2d(x, y)), [1.0, data((2,))]),
    "hstack": (_n(lambda jnp: lambda x: jnp.hstack([x, x])), [data((2, 3))]),
    "hstack_1d": (_n(lambda jnp: lambda x: jnp.hstack([x, x, 1.0])), [data((3,))]),
    "vstack": (_n(lambda jnp: lambda x: jnp.vstack([x, x])), [data((3,), I32)]),
    "dstack": (_n(lambda jnp: lambda x: jnp.dstack([x, x])), [data((2, 3))]),
    "hstack_scalars": (_n(lambda jnp: lambda x: jnp.hstack([x, 2.0])), [np.float32(1)]),
    "flip_constant": (_n(lambda jnp: lambda x: (jnp.flip(np.arange(3.0)), x)), [data((2,))]),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", JIT_WRAPPED)
def test_function_jax_stages_in_a_nested_jit_matches_jax(oracle: Oracle, name: str) -> None:
    program, args = JIT_WRAPPED[name]
    oracle.check(program, *args)


# --- hypothesis --------------------------------------------------------------------------------

shapes = st.lists(st.integers(0, 3), min_size=0, max_size=4).map(tuple)


@pytest.mark.oracle
@SETTINGS
@given(shape=shapes, data_=st.data())
def test_random_reshape_with_minus_one_matches_jax(
    oracle: Oracle, shape: tuple[int, ...], data_: Any
) -> None:
    new = list(data_.draw(st.permutations(shape)))
    if new and int(np.prod(shape)) > 0:
        new[data_.draw(st.integers(0, len(new) - 1))] = -1
    order = data_.draw(st.sampled_from(["C", "F"]))
    oracle.check(_n(lambda jnp: lambda x: jnp.reshape(x, tuple(new), order=order)), data(shape))


@pytest.mark.oracle
@SETTINGS
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=4).map(tuple), data_=st.data())
def test_random_moveaxis_matches_jax(oracle: Oracle, shape: tuple[int, ...], data_: Any) -> None:
    ndim = len(shape)
    count = data_.draw(st.integers(1, ndim))
    axes = st.integers(-ndim, ndim - 1)
    source = data_.draw(
        st.lists(axes, min_size=count, max_size=count, unique_by=lambda a: a % ndim)
    )
    dest = data_.draw(st.lists(axes, min_size=count, max_size=count, unique_by=lambda a: a % ndim))
    oracle.check(_n(lambda jnp: lambda x: jnp.moveaxis(x, source, dest)), data(shape, I32))


@pytest.mark.oracle
@SETTINGS
@given(
    size=st.integers(0, 6),
    cuts=st.lists(st.integers(0, 6), max_size=3).map(sorted),
    rest=st.lists(st.integers(1, 2), max_size=2).map(tuple),
)
def test_random_split_matches_jax(
    oracle: Oracle, size: int, cuts: list[int], rest: tuple[int, ...]
) -> None:
    indices = [min(c, size) for c in cuts]
    oracle.check(_n(lambda jnp: lambda x: jnp.split(x, indices)), data((size, *rest), BF16))


# --- errors ------------------------------------------------------------------------------------

X = data((2, 3, 4))

ERRORS: dict[str, Program] = {
    "reshape_size": _n(lambda jnp: lambda x: jnp.reshape(x, (5,))),
    "reshape_minus_one_does_not_divide": _n(lambda jnp: lambda x: jnp.reshape(x, (5, -1))),
    "reshape_two_minus_ones": _n(lambda jnp: lambda x: jnp.reshape(x, (-1, -1))),
    "reshape_float_size": _n(lambda jnp: lambda x: jnp.reshape(x, (2.0, 12))),
    "reshape_bad_order": _n(lambda jnp: lambda x: jnp.reshape(x, (24,), order="Q")),
    "reshape_list_argument": _n(lambda jnp: lambda x: jnp.reshape([1, 2], (2,))),
    "transpose_not_a_permutation": _n(lambda jnp: lambda x: jnp.transpose(x, (0, 1))),
    "transpose_axis_out_of_range": _n(lambda jnp: lambda x: jnp.transpose(x, (0, 1, 3))),
    "expand_dims_axis_out_of_range": _n(lambda jnp: lambda x: jnp.expand_dims(x, 5)),
    "expand_dims_repeated_axis": _n(lambda jnp: lambda x: jnp.expand_dims(x, (0, 0))),
    "squeeze_size_not_one": _n(lambda jnp: lambda x: jnp.squeeze(x, 0)),
    "squeeze_axis_out_of_range": _n(lambda jnp: lambda x: jnp.squeeze(x, 3)),
    "swapaxes_axis_out_of_range": _n(lambda jnp: lambda x: jnp.swapaxes(x, 0, 3)),
    "moveaxis_axis_out_of_range": _n(lambda jnp: lambda x: jnp.moveaxis(x, 0, 3)),
    "moveaxis_counts_differ": _n(lambda jnp: lambda x: jnp.moveaxis(x, (0, 1), 2)),
    "concatenate_ranks_differ": _n(lambda jnp: lambda x: jnp.concatenate([x, jnp.ravel(x)])),
    "concatenate_shapes_differ": _n(
        lambda jnp: lambda x: jnp.concatenate([x, jnp.reshape(x, (3, 2, 4))])
    ),
    "concatenate_axis_out_of_range": _n(lambda jnp: lambda x: jnp.concatenate([x, x], 3)),
    "concatenate_scalars": _n(lambda jnp: lambda x: jnp.concatenate([1.0, 2.0])),
    "concatenate_nothing": _n(lambda jnp: lambda x: jnp.concatenate([])),
    "concatenate_list_element": _n(lambda jnp: lambda x: jnp.concatenate([x, [1.0]], 0)),
    "stack_ranks_differ": _n(lambda jnp: lambda x: jnp.stack([x, 1.0])),
    "stack_shapes_differ": _n(lambda jnp: lambda x: jnp.stack([x, jnp.reshape(x, (3, 2, 4))])),
    "stack_axis_out_of_range": _n(lambda jnp: lambda x: jnp.stack([x, x], 4)),
    "stack_nothing": _n(lambda jnp: lambda x: jnp.stack([])),
    "split_unequal": _n(lambda jnp: lambda x: jnp.split(x, 3)),
    "split_decreasing_indices": _n(lambda jnp: lambda x: jnp.split(x, [3, 1], axis=2)),
    "broadcast_to_incompatible": _n(lambda jnp: lambda x: jnp.broadcast_to(x, (3, 3, 4))),
    "broadcast_to_fewer_dimensions": _n(lambda jnp: lambda x: jnp.broadcast_to(x, (3, 4))),
    "broadcast_arrays_incompatible": _n(
        lambda jnp: lambda x: jnp.broadcast_arrays(x, jnp.ones((2, 4)))
    ),
    "flip_axis_out_of_range": _n(lambda jnp: lambda x: jnp.flip(x, 3)),
    "roll_axis_out_of_range": _n(lambda jnp: lambda x: jnp.roll(x, 1, 3)),
    "tile_list_argument": _n(lambda jnp: lambda x: jnp.tile([1, 2], 2)),
    "repeat_axis_out_of_range": _n(lambda jnp: lambda x: jnp.repeat(x, 2, axis=3)),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", ERRORS)
def test_bad_input_raises_jax_error(oracle: Oracle, name: str) -> None:
    same_error(oracle, ERRORS[name], X)


@pytest.mark.oracle
def test_reshape_error_names_both_shapes(oracle: Oracle) -> None:
    message = same_error(oracle, ERRORS["reshape_size"], X)
    assert "shape (2, 3, 4) (size 24) into shape (5,) (size 5)" in message


def test_shape_functions_evaluate_eagerly() -> None:
    x = data((2, 3))
    np.testing.assert_array_equal(lnp.moveaxis(x, 0, 1), x.T)
    np.testing.assert_array_equal(lnp.concatenate([x, x], axis=None), np.concatenate([x, x], None))
    np.testing.assert_array_equal(lnp.roll(x, 1), np.roll(x, 1))
    np.testing.assert_array_equal(lnp.tile(x, (2, 1)), np.tile(x, (2, 1)))
    assert [p.shape for p in lnp.array_split(x, 2, axis=1)] == [(2, 2), (2, 1)]


def test_inferred_size_next_to_a_zero_size_is_rejected() -> None:
    # JAX 0.10.2 divides by the zero product here (ZeroDivisionError); Lamina says why.
    with pytest.raises(TypeError, match=r"product of specified axis sizes \(0\)"):
        lamina_core.make_jaxpr(lambda x: lnp.reshape(x, (0, -1)))(data((0, 4)))


def test_per_element_repeats_equal_numpy() -> None:
    # Printed jaxprs and traced repeats are checked against JAX in test_round3_stubs_a.py.
    x, counts = data((2, 3)), np.array([1, 2, 0])
    np.testing.assert_array_equal(lnp.repeat(x, counts, axis=1), np.repeat(x, counts, axis=1))
