"""Oracle tests for the lax shape, slicing and joining primitives.

Each program prints JAX 0.10.2's jaxpr byte for byte and computes JAX's numbers, over f32,
bf16, i32 and bool operands, negative axes, 0-d and empty arrays and weakly typed inputs.
Misuse raises JAX's exception type with JAX's message (Lamina may prefix the op's name).
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
from lamina_core import lax as llax
from lamina_core.testing import Oracle

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


def _p(fn: Callable[[ModuleType], Callable[..., Any]]) -> Program:
    """A program that only needs `lax`."""
    return lambda jnp, lax: fn(lax)


# --- one operand, every dtype -------------------------------------------------------------

UNARY: dict[str, tuple[Program, tuple[int, ...]]] = {
    "reshape": (_p(lambda lax: lambda x: lax.reshape(x, (6, 4))), (2, 3, 4)),
    "reshape_dimensions": (_p(lambda lax: lambda x: lax.reshape(x, (4, 6), (2, 0, 1))), (2, 3, 4)),
    "reshape_flat": (_p(lambda lax: lambda x: lax.reshape(x, (24,))), (2, 3, 4)),
    "reshape_same_shape_is_identity": (_p(lambda lax: lambda x: lax.reshape(x, (2, 3))), (2, 3)),
    "reshape_0d_to_0d_binds": (_p(lambda lax: lambda x: lax.reshape(x, ())), ()),
    "reshape_0d": (_p(lambda lax: lambda x: lax.reshape(x, (1, 1))), ()),
    "reshape_empty": (_p(lambda lax: lambda x: lax.reshape(x, (3, 0))), (0, 3)),
    "squeeze": (_p(lambda lax: lambda x: lax.squeeze(x, (0, -1))), (1, 3, 1)),
    "squeeze_nothing": (_p(lambda lax: lambda x: lax.squeeze(x, ())), (2, 3)),
    "expand_dims": (_p(lambda lax: lambda x: lax.expand_dims(x, (0, -1))), (2, 3)),
    "expand_dims_0d": (_p(lambda lax: lambda x: lax.expand_dims(x, (0,))), ()),
    "expand_dims_nothing": (_p(lambda lax: lambda x: lax.expand_dims(x, ())), (2, 3)),
    "transpose": (_p(lambda lax: lambda x: lax.transpose(x, (2, 0, 1))), (2, 3, 4)),
    "transpose_identity": (_p(lambda lax: lambda x: lax.transpose(x, (0, 1))), (2, 3)),
    "transpose_empty": (_p(lambda lax: lambda x: lax.transpose(x, (1, 0))), (0, 3)),
    "rev": (_p(lambda lax: lambda x: lax.rev(x, (0, 2))), (2, 3, 4)),
    "rev_nothing": (_p(lambda lax: lambda x: lax.rev(x, ())), (2, 3)),
    "tile": (_p(lambda lax: lambda x: lax.tile(x, (2, 1))), (2, 3)),
    "tile_empty": (_p(lambda lax: lambda x: lax.tile(x, (3, 2))), (0, 2)),
    "slice": (_p(lambda lax: lambda x: lax.slice(x, (0, 1, 0), (2, 3, 4))), (2, 3, 4)),
    "slice_strided": (
        _p(lambda lax: lambda x: lax.slice(x, (0, 0, 1), (2, 3, 4), (1, 2, 2))),
        (2, 3, 4),
    ),
    "slice_unit_strides": (_p(lambda lax: lambda x: lax.slice(x, (0, 0), (2, 3), (1, 1))), (2, 3)),
    "slice_empty_result": (_p(lambda lax: lambda x: lax.slice(x, (1, 0), (1, 3))), (2, 3)),
    "slice_in_dim": (_p(lambda lax: lambda x: lax.slice_in_dim(x, 1, -1, axis=2)), (2, 3, 4)),
    "slice_in_dim_strided": (
        _p(lambda lax: lambda x: lax.slice_in_dim(x, None, None, 2, 1)),
        (2, 3),
    ),
    "index_in_dim": (_p(lambda lax: lambda x: lax.index_in_dim(x, -1, axis=1)), (2, 3)),
    "index_in_dim_drop": (_p(lambda lax: lambda x: lax.index_in_dim(x, 0, 0, False)), (2, 3)),
    "collapse": (_p(lambda lax: lambda x: lax.collapse(x, 1, 3)), (2, 3, 4)),
    "collapse_to_end": (_p(lambda lax: lambda x: lax.collapse(x, 0)), (2, 3, 4)),
    "split": (_p(lambda lax: lambda x: lax.split(x, (1, 0, 3), -1)), (2, 4)),
    "unstack": (_p(lambda lax: lambda x: lax.unstack(x, 1)), (2, 3)),
    "stack_one": (_p(lambda lax: lambda x: lax.stack([x], -1)), (2, 3)),
    "concatenate_one_is_identity": (_p(lambda lax: lambda x: lax.concatenate([x], 0)), (2, 3)),
    "dynamic_slice": (_p(lambda lax: lambda x: lax.dynamic_slice(x, (0, 1), (2, 2))), (2, 3)),
    "dynamic_slice_negative": (
        _p(lambda lax: lambda x: lax.dynamic_slice(x, (-1, -2), (1, 2))),
        (2, 3),
    ),
    "dynamic_slice_clamped": (
        _p(lambda lax: lambda x: lax.dynamic_slice(x, (5, 2), (2, 2))),
        (2, 3),
    ),
    "dynamic_slice_in_dim": (
        _p(lambda lax: lambda x: lax.dynamic_slice_in_dim(x, 1, 2, axis=-1)),
        (2, 4),
    ),
}


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", UNARY)
def test_one_operand_program_matches_jax(oracle: Oracle, name: str, dtype: np.dtype) -> None:
    program, shape = UNARY[name]
    oracle.check(program, data(shape, dtype))


# --- several operands --------------------------------------------------------------------------

MULTI: dict[str, tuple[Program, list[tuple[int, ...]]]] = {
    "concatenate": (_p(lambda lax: lambda x, y: lax.concatenate([x, y], 1)), [(2, 3), (2, 1)]),
    "concatenate_three": (
        _p(lambda lax: lambda x, y: lax.concatenate([x, y, x], 0)),
        [(2, 3), (1, 3)],
    ),
    "concatenate_empty": (
        _p(lambda lax: lambda x, y: lax.concatenate([x, y], 0)),
        [(0, 3), (2, 3)],
    ),
    "stack": (_p(lambda lax: lambda x, y: lax.stack([x, y], 1)), [(2, 3), (2, 3)]),
    "stack_0d": (_p(lambda lax: lambda x, y: lax.stack([x, y, x])), [(), ()]),
    "dynamic_update_slice": (
        _p(lambda lax: lambda x, u: lax.dynamic_update_slice(x, u, (1, 1))),
        [(3, 4), (2, 2)],
    ),
    "dynamic_update_slice_clamped": (
        _p(lambda lax: lambda x, u: lax.dynamic_update_slice(x, u, (2, -1))),
        [(3, 4), (2, 3)],
    ),
    "dynamic_update_slice_in_dim": (
        _p(lambda lax: lambda x, u: lax.dynamic_update_slice_in_dim(x, u, -2, axis=1)),
        [(3, 4), (3, 1)],
    ),
}


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", MULTI)
def test_several_operand_program_matches_jax(oracle: Oracle, name: str, dtype: np.dtype) -> None:
    program, shapes = MULTI[name]
    oracle.check(program, *[data(s, dtype) for s in shapes])


# --- pad ----------------------------------------------------------------------------------------

PADS: dict[str, tuple[tuple[int, ...], tuple[tuple[int, int, int], ...]]] = {
    "edges": ((2, 3), ((1, 2, 0), (0, 1, 0))),
    "interior": ((2, 3), ((0, 0, 1), (0, 0, 2))),
    "negative": ((3, 4), ((-1, 0, 0), (-1, -2, 0))),
    "negative_with_interior": ((3, 4), ((-1, -1, 2), (1, -3, 1))),
    "empty_operand": ((0, 2), ((1, 1, 3), (0, 0, 0))),
    "scalar": ((), ()),
}


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", PADS)
def test_pad_matches_jax(oracle: Oracle, name: str, dtype: np.dtype) -> None:
    shape, config = PADS[name]
    padding = np.array(True if dtype == BOOL else 7, dtype)
    oracle.check(_p(lambda lax: lambda x, v: lax.pad(x, v, config)), data(shape, dtype), padding)


@pytest.mark.oracle
def test_pad_with_a_literal_padding_value_matches_jax(oracle: Oracle) -> None:
    oracle.check(_p(lambda lax: lambda x: lax.pad(x, -1.5, [(1, 0, 1)])), data((3,)))


def test_pad_reference_removes_and_dilates() -> None:
    x = np.array([1, 2, 3, 4], np.int32)
    out = llax.pad(x, np.int32(0), [(-1, 2, 1)])
    np.testing.assert_array_equal(out, [0, 2, 0, 3, 0, 4, 0, 0])


# --- iota ---------------------------------------------------------------------------------------


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", [I32, F32, BF16, np.dtype(np.uint8)], ids=str)
def test_iota_matches_jax(oracle: Oracle, dtype: np.dtype) -> None:
    oracle.check(_p(lambda lax: lambda: lax.iota(dtype, 5)))


@pytest.mark.oracle
@pytest.mark.parametrize(
    ("shape", "dimension"), [((2, 3), 0), ((2, 3), 1), ((0, 4), 1), ((2, 1, 3), 2)]
)
def test_broadcasted_iota_matches_jax(
    oracle: Oracle, shape: tuple[int, ...], dimension: int
) -> None:
    oracle.check(_p(lambda lax: lambda: lax.broadcasted_iota(np.int32, shape, dimension)))


# --- traced start indices -------------------------------------------------------------------


@pytest.mark.oracle
@pytest.mark.parametrize(
    "index", [1, np.int32(-1), np.int32(7), np.int16(-2)], ids=["weak", "neg", "clamped", "i16"]
)
def test_dynamic_slice_with_a_traced_index_matches_jax(oracle: Oracle, index: Any) -> None:
    start = np.zeros((), np.asarray(index).dtype if not isinstance(index, int) else np.int32)

    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        return lambda x, i: lax.dynamic_slice(x, (i, start), (2, 4))

    oracle.check(program, data((5, 4)), index)


@pytest.mark.oracle
@pytest.mark.parametrize("index", [np.int32(-1), np.uint32(9)], ids=["neg", "unsigned"])
def test_dynamic_update_slice_with_a_traced_index_matches_jax(oracle: Oracle, index: Any) -> None:
    zero = np.zeros((), np.asarray(index).dtype)
    oracle.check(
        _p(lambda lax: lambda x, u, i: lax.dynamic_update_slice(x, u, (zero, i))),
        data((3, 5)),
        data((3, 2)),
        index,
    )


@pytest.mark.oracle
def test_dynamic_slice_in_dim_with_a_traced_index_matches_jax(oracle: Oracle) -> None:
    program = _p(lambda lax: lambda x, i: lax.dynamic_slice_in_dim(x, i, 2, axis=1))
    oracle.check(program, data((3, 5)), np.int32(-3))


@pytest.mark.oracle
def test_dynamic_update_slice_in_dim_with_a_traced_index_matches_jax(oracle: Oracle) -> None:
    program = _p(lambda lax: lambda x, u, i: lax.dynamic_update_slice_in_dim(x, u, i, axis=0))
    oracle.check(program, data((4, 2)), data((2, 2)), np.int32(3))


JIT_WRAPPED: dict[str, tuple[Program, list[Any]]] = {
    "dynamic_index_in_dim": (
        _p(lambda lax: lambda x, i: lax.dynamic_index_in_dim(x, i, axis=1, keepdims=False)),
        [data((2, 5)), np.int32(-1)],
    ),
    "dynamic_index_in_dim_weak_index": (
        _p(lambda lax: lambda x: lax.dynamic_index_in_dim(x, 1, -1)),
        [data((2, 5), BF16)],
    ),
    "dynamic_update_index_in_dim": (
        _p(lambda lax: lambda x, u, i: lax.dynamic_update_index_in_dim(x, u, i, axis=1)),
        [data((2, 5)), data((2,)), np.int32(9)],
    ),
    "dynamic_update_index_in_dim_keeps_axis": (
        _p(lambda lax: lambda x, u: lax.dynamic_update_index_in_dim(x, u, 1, 0)),
        [data((3, 2), I32), data((1, 2), I32)],
    ),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", JIT_WRAPPED)
def test_function_jax_stages_in_a_nested_jit_matches_jax(oracle: Oracle, name: str) -> None:
    program, args = JIT_WRAPPED[name]
    oracle.check(program, *args)


def test_dynamic_slice_reference_clamps_like_xla() -> None:
    x = np.arange(5, dtype=np.int32)
    np.testing.assert_array_equal(llax.dynamic_slice(x, (np.int32(4),), (3,)), [2, 3, 4])
    np.testing.assert_array_equal(llax.dynamic_slice(x, (np.uint32(0),), (2,)), [0, 1])
    update = np.array([9, 9], np.int32)
    np.testing.assert_array_equal(llax.dynamic_update_slice(x, update, (7,)), [0, 1, 2, 9, 9])
    # -7 wraps once to -2, which then clamps to 0.
    np.testing.assert_array_equal(llax.dynamic_update_slice(x, update, (-7,)), [9, 9, 2, 3, 4])


# --- weak types ------------------------------------------------------------------------------


WEAK: dict[str, Program] = {
    "reshape_keeps_weak_type": lambda jnp, lax: lambda s, x: lax.reshape(s, (1,)) * x,
    "expand_dims_keeps_weak_type": lambda jnp, lax: lambda s, x: lax.expand_dims(s, (0,)) + x,
    "concatenate_of_weak_is_weak": (
        lambda jnp, lax: lambda s, x: lax.concatenate([lax.reshape(s, (1,))] * 2, 0) + x
    ),
    "stack_of_weak_is_weak": lambda jnp, lax: lambda s, x: lax.stack([s, s]) - x,
    "pad_of_weak_is_weak": lambda jnp, lax: (
        lambda s, x: lax.pad(lax.reshape(s, (1,)), 0.0, [(1, 0, 0)]) * x
    ),
    "split_keeps_weak_type": lambda jnp, lax: (
        lambda s, x: lax.split(lax.stack([s, s]), (1, 1))[0] * x
    ),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", WEAK)
def test_weak_type_flows_through_like_jax(oracle: Oracle, name: str) -> None:
    oracle.check(WEAK[name], 1.5, data((2,), BF16))


@pytest.mark.oracle
def test_constant_operand_is_staged_like_jax(oracle: Oracle) -> None:
    const = data((2, 3))
    oracle.check(
        _p(lambda lax: lambda x: (lax.transpose(const, (0, 1)), lax.squeeze(const, ()))), 1
    )


# --- hypothesis --------------------------------------------------------------------------------

shapes = st.lists(st.integers(0, 3), min_size=0, max_size=4).map(tuple)


@pytest.mark.oracle
@SETTINGS
@given(shape=shapes, data_=st.data())
def test_random_reshape_matches_jax(oracle: Oracle, shape: tuple[int, ...], data_: Any) -> None:
    new = data_.draw(st.permutations(shape))
    dims = data_.draw(st.none() | st.permutations(range(len(shape))))
    dims = None if dims is None else tuple(dims)
    oracle.check(_p(lambda lax: lambda x: lax.reshape(x, tuple(new), dims)), data(shape))


@pytest.mark.oracle
@SETTINGS
@given(shape=shapes, data_=st.data())
def test_random_transpose_matches_jax(oracle: Oracle, shape: tuple[int, ...], data_: Any) -> None:
    perm = tuple(data_.draw(st.permutations(range(len(shape)))))
    oracle.check(_p(lambda lax: lambda x: lax.transpose(x, perm)), data(shape, I32))


@pytest.mark.oracle
@SETTINGS
@given(
    base=st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple),
    sizes=st.lists(st.integers(0, 3), min_size=1, max_size=3),
    data_=st.data(),
)
def test_random_concatenate_matches_jax(
    oracle: Oracle, base: tuple[int, ...], sizes: list[int], data_: Any
) -> None:
    axis = data_.draw(st.integers(0, len(base) - 1))
    parts = [data((*base[:axis], n, *base[axis + 1 :]), BF16) for n in sizes]
    oracle.check(_p(lambda lax: lambda *xs: lax.concatenate(xs, axis)), *parts)


@pytest.mark.oracle
@SETTINGS
@given(shape=st.lists(st.integers(0, 3), min_size=1, max_size=2).map(tuple), data_=st.data())
def test_random_pad_matches_jax(oracle: Oracle, shape: tuple[int, ...], data_: Any) -> None:
    config = []
    for d in shape:
        lo, hi, interior = data_.draw(
            st.tuples(st.integers(-2, 2), st.integers(-2, 2), st.integers(0, 2))
        )
        dilated = 0 if d == 0 else d + (d - 1) * interior
        lo = max(lo, -dilated)
        hi = max(hi, -dilated - lo)
        config.append((lo, hi, interior))
    oracle.check(_p(lambda lax: lambda x: lax.pad(x, np.float32(-1), config)), data(shape))


@pytest.mark.oracle
@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), data_=st.data())
def test_random_slice_matches_jax(oracle: Oracle, shape: tuple[int, ...], data_: Any) -> None:
    starts, limits, strides = [], [], []
    for d in shape:
        start = data_.draw(st.integers(0, d))
        starts.append(start)
        limits.append(data_.draw(st.integers(start, d)))
        strides.append(data_.draw(st.integers(1, 3)))
    oracle.check(_p(lambda lax: lambda x: lax.slice(x, starts, limits, strides)), data(shape, I32))


# --- errors ------------------------------------------------------------------------------------

X = data((2, 3, 4))

ERRORS: dict[str, Program] = {
    "reshape_negative_size": _p(lambda lax: lambda x: lax.reshape(x, (-1,))),
    "reshape_dimensions_not_a_permutation": _p(lambda lax: lambda x: lax.reshape(x, (24,), (0, 1))),
    "squeeze_axis_out_of_range": _p(lambda lax: lambda x: lax.squeeze(x, (3,))),
    "squeeze_size_not_one": _p(lambda lax: lambda x: lax.squeeze(x, (0,))),
    "expand_dims_repeated_axis": _p(lambda lax: lambda x: lax.expand_dims(x, (0, 0))),
    "expand_dims_repeated_after_wrapping": _p(lambda lax: lambda x: lax.expand_dims(x, (0, -5))),
    "transpose_too_short": _p(lambda lax: lambda x: lax.transpose(x, (0, 1))),
    "transpose_repeated_axis": _p(lambda lax: lambda x: lax.transpose(x, (0, 1, 1))),
    "rev_repeated_dimension": _p(lambda lax: lambda x: lax.rev(x, (0, 0))),
    "rev_dimension_out_of_range": _p(lambda lax: lambda x: lax.rev(x, (3,))),
    "rev_negative_dimension": _p(lambda lax: lambda x: lax.rev(x, (-1,))),
    "tile_wrong_length": _p(lambda lax: lambda x: lax.tile(x, (1, 2))),
    "concatenate_nothing": _p(lambda lax: lambda x: lax.concatenate([], 0)),
    "concatenate_ranks_differ": _p(
        lambda lax: lambda x: lax.concatenate([x, lax.index_in_dim(x, 0, 0, False)], 0)
    ),
    "concatenate_shapes_differ": _p(
        lambda lax: lambda x: lax.concatenate([x, lax.slice(x, (0, 0, 0), (2, 2, 4))], 0)
    ),
    "concatenate_dimension_out_of_range": _p(lambda lax: lambda x: lax.concatenate([x, x], 3)),
    "concatenate_dtypes_differ": _p(
        lambda lax: lambda x: lax.concatenate([x, lax.convert_element_type(x, np.int32)], 0)
    ),
    "stack_shapes_differ": _p(
        lambda lax: lambda x: lax.stack([x, lax.slice(x, (0, 0, 0), (2, 2, 4))])
    ),
    "stack_ranks_differ": _p(lambda lax: lambda x: lax.stack([x, 1.0])),
    "unstack_scalar": _p(lambda lax: lambda x: lax.unstack(np.float32(1))),
    "split_negative_size": _p(lambda lax: lambda x: lax.split(x, (3, -1), 0)),
    "split_sizes_do_not_sum": _p(lambda lax: lambda x: lax.split(x, (1, 2), 2)),
    "pad_config_too_short": _p(lambda lax: lambda x: lax.pad(x, 0.0, [(1, 1, 0)])),
    "pad_negative_interior": _p(
        lambda lax: lambda x: lax.pad(x, 0.0, [(1, 1, -1), (0, 0, 0), (0, 0, 0)])
    ),
    "pad_removes_too_much": _p(
        lambda lax: lambda x: lax.pad(x, 0.0, [(-2, -1, 0), (0, 0, 0), (0, 0, 0)])
    ),
    "pad_dtypes_differ": _p(lambda lax: lambda x: lax.pad(x, 0, [(1, 1, 0), (0, 0, 0), (0, 0, 0)])),
    "pad_value_not_scalar": _p(
        lambda lax: lambda x: lax.pad(x, np.zeros(4, np.float32), [(1, 1, 0)] * 3)
    ),
    "slice_limit_out_of_range": _p(lambda lax: lambda x: lax.slice(x, (0, 0, 0), (3, 3, 4))),
    "slice_negative_start": _p(lambda lax: lambda x: lax.slice(x, (-1, 0, 0), (2, 3, 4))),
    "slice_wrong_rank": _p(lambda lax: lambda x: lax.slice(x, (0, 0), (2, 3))),
    "slice_limit_before_start": _p(lambda lax: lambda x: lax.slice(x, (1, 0, 0), (0, 3, 4))),
    "slice_strides_wrong_length": _p(
        lambda lax: lambda x: lax.slice(x, (0, 0, 0), (2, 3, 4), (1, 1))
    ),
    "slice_float_start": _p(lambda lax: lambda x: lax.slice(x, (0.5, 0, 0), (2, 3, 4))),
    "index_in_dim_out_of_range": _p(lambda lax: lambda x: lax.index_in_dim(x, 4, axis=2)),
    "collapse_backwards": _p(lambda lax: lambda x: lax.collapse(x, 2, 1)),
    "dynamic_slice_too_big": _p(lambda lax: lambda x: lax.dynamic_slice(x, (0, 0, 0), (3, 3, 4))),
    "dynamic_slice_negative_size": _p(
        lambda lax: lambda x: lax.dynamic_slice(x, (0, 0, 0), (2, -1, 4))
    ),
    "dynamic_slice_wrong_index_count": _p(
        lambda lax: lambda x: lax.dynamic_slice(x, (0, 0), (2, 3, 4))
    ),
    "dynamic_slice_float_index": _p(
        lambda lax: lambda x: lax.dynamic_slice(x, (0.0, 0, 0), (2, 3, 4))
    ),
    "dynamic_slice_mixed_index_types": _p(
        lambda lax: lambda x: lax.dynamic_slice(x, (np.int16(0), 0, 0), (2, 3, 4))
    ),
    "dynamic_slice_index_not_scalar": _p(
        lambda lax: lambda x: lax.dynamic_slice(x, (np.zeros(2, np.int32), 0, 0), (2, 3, 4))
    ),
    "dynamic_slice_negative_not_allowed": _p(
        lambda lax: (
            lambda x: lax.dynamic_slice(x, (-1, 0, 0), (2, 3, 4), allow_negative_indices=False)
        )
    ),
    "dynamic_update_slice_too_big": _p(
        lambda lax: (
            lambda x: lax.dynamic_update_slice(x, np.zeros((3, 3, 4), np.float32), (0, 0, 0))
        )
    ),
    "dynamic_update_slice_rank": _p(
        lambda lax: lambda x: lax.dynamic_update_slice(x, np.zeros((3, 4), np.float32), (0, 0, 0))
    ),
    "dynamic_update_slice_dtypes": _p(
        lambda lax: lambda x: lax.dynamic_update_slice(x, np.zeros((1, 3, 4), np.int32), (0, 0, 0))
    ),
    "dynamic_update_slice_index_types": _p(
        lambda lax: lambda x: lax.dynamic_update_slice(x, x, (0, np.int16(0), 0))
    ),
    "iota_dimension_out_of_range": _p(
        lambda lax: lambda x: lax.broadcasted_iota(np.int32, (2, 3), 2)
    ),
    "iota_bool": _p(lambda lax: lambda x: lax.iota(np.bool_, 3)),
    "iota_negative_size": _p(lambda lax: lambda x: lax.iota(np.int32, -1)),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", ERRORS)
def test_bad_input_raises_jax_error(oracle: Oracle, name: str) -> None:
    same_error(oracle, ERRORS[name], X)


@pytest.mark.oracle
def test_concatenate_error_names_shapes(oracle: Oracle) -> None:
    message = same_error(oracle, ERRORS["concatenate_shapes_differ"], X)
    assert "(2, 3, 4), (2, 2, 4)" in message


def test_reshape_that_changes_the_size_is_rejected() -> None:
    # JAX 0.10.2 stages this and fails only when lowering; Lamina refuses to build the jaxpr.
    with pytest.raises(TypeError, match=r"reshape total size must be unchanged.*\(2, 3\)"):
        lamina_core.make_jaxpr(lambda x: llax.reshape(x, (5,)))(data((2, 3)))


def test_zero_slice_stride_is_rejected() -> None:
    # JAX 0.10.2 lets a zero stride through its check and then divides by it.
    with pytest.raises(TypeError, match=r"slice strides must be positive, got \(1, 0\)"):
        lamina_core.make_jaxpr(lambda x: llax.slice(x, (0, 0), (2, 3), (1, 0)))(data((2, 3)))


def test_shape_functions_evaluate_eagerly_to_numpy() -> None:
    x = data((2, 3))
    np.testing.assert_array_equal(llax.transpose(x, (1, 0)), x.T)
    np.testing.assert_array_equal(llax.rev(x, (1,)), x[:, ::-1])
    first, second = llax.split(x, (2, 1), axis=1)
    np.testing.assert_array_equal(first, x[:, :2])
    np.testing.assert_array_equal(second, x[:, 2:])
    np.testing.assert_array_equal(llax.broadcasted_iota(np.int32, (2, 2), 1), [[0, 1], [0, 1]])
