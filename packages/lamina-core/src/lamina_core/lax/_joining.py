"""Joining and splitting primitives: concatenate, stack, unstack, split and pad.

`split` and `unstack` have several results. Weak typing follows JAX's default rule: a result
is weakly typed only when every array operand is (for `split` and `unstack`, the one operand).
Installs `stack` as the one `sequential_vmap`'s rule joins its per-example results with.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, TypeAlias

import numpy as np

from lamina_core.custom_derivatives import install_stack
from lamina_core.ir import AbstractValue, Primitive, ShapedArray, abstract_eval_rules, impl_rules
from lamina_core.lax import _checks as c
from lamina_core.lax._shape import asarray, canonicalize_axis, is_array, shape_of
from lamina_core.lax._types import Array
from lamina_core.trace import CHECKED_SCOPES, insert_pvary

concatenate_p: Final = Primitive("concatenate")
stack_p: Final = Primitive("stack")
unstack_p: Final = Primitive("unstack", multiple_results=True)
split_p: Final = Primitive("split", multiple_results=True)
pad_p: Final = Primitive("pad")


Size: TypeAlias = "int | np.integer[Any]"
"""A static size: `jnp.split` passes NumPy int64s, which the split equation prints as such."""


def _shapes(avals: Sequence[ShapedArray]) -> str:
    return ", ".join(str(a.shape) for a in avals)


# --- concatenate -----------------------------------------------------------------------------


@abstract_eval_rules.register(concatenate_p)
def _concatenate_abstract_eval(*operands: AbstractValue, dimension: int) -> ShapedArray:
    if not operands:
        raise TypeError("concatenate expects at least one operand, got 0.")
    for op in operands:
        if not isinstance(op, ShapedArray):
            raise TypeError(f"All objects to concatenate must be arrays, got {type(op)}.")
    avals = [c.array_aval("concatenate", op) for op in operands]
    if len({a.ndim for a in avals}) != 1:
        raise TypeError(
            f"Cannot concatenate arrays with different numbers of dimensions: got {_shapes(avals)}."
        )
    if not 0 <= dimension < avals[0].ndim:
        raise TypeError(
            f"concatenate dimension out of bounds: dimension {dimension} for shapes "
            f"{_shapes(avals)}."
        )
    others = {a.shape[:dimension] + a.shape[dimension + 1 :] for a in avals}
    if len(others) != 1:
        raise TypeError(
            f"Cannot concatenate arrays with shapes that differ in dimensions other than the "
            f"one being concatenated: concatenating along dimension {dimension} for shapes "
            f"{_shapes(avals)}."
        )
    dtype = c.check_same_dtypes("concatenate", avals)
    first = avals[0].shape
    size = sum(a.shape[dimension] for a in avals)
    shape = (*first[:dimension], size, *first[dimension + 1 :])
    return ShapedArray(shape, dtype, all(a.weak_type for a in avals))


@impl_rules.register(concatenate_p)
def _concatenate_impl(*operands: np.ndarray, dimension: int) -> np.ndarray:
    return np.concatenate(operands, axis=dimension)


def concatenate(operands: Sequence[Array], dimension: int) -> Array:
    """Join `operands` along `dimension`; they must agree in dtype and every other dimension.

    Raises:
        TypeError: the operands differ in rank, dtype or the sizes of other dimensions, or
            `dimension` is out of range.
    """
    if len(operands) == 0:
        raise ValueError("concatenate requires a non-empty sequences of arrays")
    if len(operands) == 1 and is_array(operands[0]):
        return operands[0]
    return concatenate_p.bind(*insert_pvary(*operands), dimension=dimension)


# --- stack and unstack -----------------------------------------------------------------------


@abstract_eval_rules.register(stack_p)
def _stack_abstract_eval(*operands: AbstractValue, axis: int) -> ShapedArray:
    if not operands:
        raise ValueError("stack expects at least one operand, got 0.")
    avals = [c.array_aval("stack", op) for op in operands]
    if len({a.ndim for a in avals}) != 1:
        raise ValueError(
            f"Cannot stack arrays with different numbers of dimensions: got {_shapes(avals)}."
        )
    if len({a.shape for a in avals}) != 1:
        raise ValueError(f"All input arrays must have the same shape. Got {_shapes(avals)}.")
    dtype = c.check_same_dtypes("stack", avals)
    shape = list(avals[0].shape)
    shape.insert(axis, len(avals))
    return ShapedArray(tuple(shape), dtype, all(a.weak_type for a in avals))


@impl_rules.register(stack_p)
def _stack_impl(*operands: np.ndarray, axis: int) -> np.ndarray:
    return np.stack(operands, axis=axis)


def stack(operands: Sequence[Array], axis: int = 0) -> Array:
    """Join equally shaped `operands` along a new `axis` of the result."""
    arrays = [asarray(op) for op in operands]
    if not arrays:
        raise ValueError("stack expects at least one operand, got 0.")
    axis = canonicalize_axis(axis, len(shape_of(arrays[0])) + 1, "lax.stack")
    return stack_p.bind(*arrays, axis=axis)


@abstract_eval_rules.register(unstack_p)
def _unstack_abstract_eval(x: AbstractValue, *, axis: int) -> list[ShapedArray]:
    aval = c.array_aval("unstack", x)
    if aval.ndim == 0:
        raise ValueError(
            f"unstack requires arrays with rank > 0, however a scalar array of shape "
            f"{aval.shape} was passed."
        )
    shape = aval.shape[:axis] + aval.shape[axis + 1 :]
    return [ShapedArray(shape, aval.dtype, aval.weak_type)] * aval.shape[axis]


@impl_rules.register(unstack_p)
def _unstack_impl(x: np.ndarray, *, axis: int) -> list[np.ndarray]:
    return [np.take(x, i, axis=axis) for i in range(np.shape(x)[axis])]


def unstack(x: Array, axis: int = 0) -> tuple[Array, ...]:
    """The slices of `x` along `axis`, each without that axis."""
    arr = asarray(x)
    axis = canonicalize_axis(axis, len(shape_of(arr)), "lax.unstack")
    return tuple(unstack_p.bind(arr, axis=axis))


# --- split -----------------------------------------------------------------------------------


@abstract_eval_rules.register(split_p)
def _split_abstract_eval(x: AbstractValue, *, sizes: Sequence[int], axis: int) -> list[ShapedArray]:
    aval = c.array_aval("split", x)
    if not 0 <= axis < aval.ndim:
        raise ValueError(f"split: axis {axis} is out of bounds for array of dimension {aval.ndim}")
    if any(s < 0 for s in sizes):
        raise ValueError(f"Sizes passed to split must be nonnegative, got {list(sizes)}")
    if aval.shape[axis] != sum(sizes):
        raise ValueError(
            f"Sum of sizes {sum(sizes)} must be equal to dimension {axis} of the operand "
            f"shape {list(aval.shape)}"
        )
    return [
        ShapedArray(
            (*aval.shape[:axis], int(s), *aval.shape[axis + 1 :]), aval.dtype, aval.weak_type
        )
        for s in sizes
    ]


@impl_rules.register(split_p)
def _split_impl(x: np.ndarray, *, sizes: Sequence[int], axis: int) -> list[np.ndarray]:
    return np.split(x, np.cumsum(sizes)[:-1].astype(int), axis=axis)


def split(operand: Array, sizes: Sequence[Size], axis: int = 0) -> Sequence[Array]:
    """Split `operand` along `axis` into pieces of the given `sizes` (summing to its size)."""
    arr = asarray(operand)
    axis = canonicalize_axis(axis, len(shape_of(arr)), "lax.split")
    return split_p.bind(arr, sizes=tuple(sizes), axis=axis)  # type: ignore[no-any-return]  # a list of results


# --- pad -------------------------------------------------------------------------------------


def _dilated(size: int, interior: int) -> int:
    return 0 if size == 0 else 1 + (interior + 1) * (size - 1)


@abstract_eval_rules.register(pad_p)
def _pad_abstract_eval(
    x: AbstractValue,
    padding_value: AbstractValue,
    *,
    padding_config: Sequence[tuple[int, int, int]],
) -> ShapedArray:
    aval = c.array_aval("pad", x)
    value = c.array_aval("pad", padding_value)
    if value.ndim != 0:
        raise ValueError(
            f"padding_value must be a scalar; got np.shape(padding_value)={value.shape}"
        )
    if len(padding_config) != aval.ndim:
        raise ValueError(
            f"length of padding_config must equal the number of axes of operand, got "
            f"padding_config {padding_config} for operand shape {aval.shape}"
        )
    if not all(i >= 0 for _, _, i in padding_config):
        raise ValueError(
            f"interior padding in padding_config must be nonnegative, got padding_config "
            f"{padding_config}"
        )
    shape = tuple(
        lo + hi + _dilated(d, i) for (lo, hi, i), d in zip(padding_config, aval.shape, strict=True)
    )
    if not all(d >= 0 for d in shape):
        raise ValueError(
            f"Dimension size after padding is not at least 0, got result shape {shape}, for "
            f"padding_config {padding_config} and operand shape {aval.shape}"
        )
    if aval.dtype != value.dtype:
        raise TypeError(
            f"pad operand and padding_value must be same dtype: got {aval.dtype.name} and "
            f"{value.dtype.name}."
        )
    return ShapedArray(shape, aval.dtype, aval.weak_type and value.weak_type)


@impl_rules.register(pad_p)
def _pad_impl(
    x: np.ndarray, padding_value: np.ndarray, *, padding_config: Sequence[tuple[int, int, int]]
) -> np.ndarray:
    # Dilate and pad with the non-negative amounts, then crop what negative padding removes.
    grown = [
        max(lo, 0) + _dilated(d, i) + max(hi, 0)
        for (lo, hi, i), d in zip(padding_config, np.shape(x), strict=True)
    ]
    out = np.full(grown, padding_value, dtype=np.result_type(x))
    out[
        tuple(
            np.s_[max(lo, 0) : max(lo, 0) + _dilated(d, i) : i + 1]
            for (lo, _, i), d in zip(padding_config, np.shape(x), strict=True)
        )
    ] = x
    crop = tuple(
        np.s_[max(-lo, 0) : n - max(-hi, 0)]
        for (lo, hi, _), n in zip(padding_config, grown, strict=True)
    )
    return out[crop]


def pad(operand: Array, padding_value: Array, padding_config: Sequence[Sequence[int]]) -> Array:
    """Pad `operand` with `padding_value`: `(low, high, interior)` amounts per dimension.

    Negative low/high amounts remove elements from the edges; interior padding inserts
    `interior` values between neighbouring elements.
    """
    config = tuple(tuple(p) for p in padding_config)
    if CHECKED_SCOPES[0]:
        operand, padding_value = insert_pvary(operand, padding_value)
    return pad_p.bind(operand, padding_value, padding_config=config)


install_stack(stack)

__all__ = [
    "concatenate",
    "concatenate_p",
    "pad",
    "pad_p",
    "split",
    "split_p",
    "stack",
    "stack_p",
    "unstack",
    "unstack_p",
]
