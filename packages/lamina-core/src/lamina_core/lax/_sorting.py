"""Sorting primitives: `sort` (multi-operand, lexicographic on the first `num_keys`) and
`top_k`.

Both have several results. The order is JAX's total order: -inf < … < inf < NaN, with -0.0 and
0.0 equal; complex numbers compare by real part, then imaginary part. `top_k` returns values
in descending order and int32 indices, the lower index first among equal values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from lamina_core.ir import AbstractValue, Primitive, ShapedArray, abstract_eval_rules, impl_rules
from lamina_core.lax import _checks as c
from lamina_core.lax._types import Array
from lamina_core.trace import typeof

sort_p: Final = Primitive("sort", multiple_results=True)
top_k_p: Final = Primitive("top_k", multiple_results=True)


@abstract_eval_rules.register(sort_p)
def _sort_abstract_eval(
    *operands: AbstractValue, dimension: int, is_stable: bool, num_keys: int
) -> list[ShapedArray]:
    avals = [c.array_aval("sort", x) for x in operands]
    if any(a.shape != avals[0].shape for a in avals[1:]):
        shapes = " ".join(str(a.shape) for a in avals)
        raise TypeError(f"Arguments to sort must have equal shapes, got: {shapes}")
    if not 0 <= dimension < max(avals[0].ndim, 1):
        raise ValueError(
            f"sort: dimension {dimension} is out of bounds for operands of rank {avals[0].ndim}"
        )
    return avals


def _sort_key(x: np.ndarray) -> np.ndarray:
    """A NumPy-sortable key with the total order above (NumPy already puts NaN last)."""
    if c.kind_of(x.dtype) == "f" and x.dtype.itemsize < 4:
        x = x.astype(np.float32)  # exact, and NumPy sorts float32 natively
    if x.dtype.kind == "f":
        x = np.where(x == 0, np.zeros_like(x), x)  # -0.0 sorts with 0.0
    return x


def _lexsort(keys: Sequence[np.ndarray], axis: int) -> np.ndarray:
    """Stable sort permutation along `axis`, the first key primary."""
    columns: list[np.ndarray] = []
    for key in reversed(keys):
        key = _sort_key(key)
        if key.dtype.kind == "c":
            columns += [np.imag(key), np.real(key)]
        else:
            columns.append(key)
    if not columns[0].shape:
        return np.zeros((), np.intp)
    moved = [np.moveaxis(k, axis, -1) for k in columns]
    order = np.lexsort(moved, axis=-1)
    return np.moveaxis(order, -1, axis)


@impl_rules.register(sort_p)
def _sort_impl(
    *operands: np.ndarray, dimension: int, is_stable: bool, num_keys: int
) -> list[np.ndarray]:
    arrays = [np.asarray(x) for x in operands]
    if not arrays[0].shape:
        return arrays
    order = _lexsort(arrays[:num_keys], dimension)
    return [np.take_along_axis(x, order, axis=dimension) for x in arrays]


@abstract_eval_rules.register(top_k_p)
def _top_k_abstract_eval(x: AbstractValue, *, k: int, axis: int) -> list[ShapedArray]:
    aval = c.array_aval("top_k", x)
    if c.kind_of(aval.dtype) == "c":
        raise ValueError("top_k is not compatible with complex inputs.")
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    if aval.ndim == 0:
        raise TypeError(f"top_k operand must have >= 1 dimension, got {aval.shape}")
    if not 0 <= axis < aval.ndim:
        raise ValueError(f"axis argument out of range: axis={axis} for operand.shape={aval.shape}")
    shape = list(aval.shape)
    if shape[axis] < k:
        raise ValueError(
            f"k argument to top_k must be no larger than size along axis; got k={k} with "
            f"shape={shape} and axis={axis}"
        )
    shape[axis] = k
    # JAX derives the indices' type from the operand's, weak type included.
    return [aval.update(shape=tuple(shape)), aval.update(shape=tuple(shape), dtype=_INT32)]


_INT32: Final = np.dtype(np.int32)


@impl_rules.register(top_k_p)
def _top_k_impl(x: np.ndarray, *, k: int, axis: int) -> list[np.ndarray]:
    x = np.asarray(x)
    # A stable ascending sort of the reversed operand, read backwards, is descending with the
    # lower index first among equals.
    backwards = np.flip(x, axis)
    order = np.flip(_lexsort([backwards], axis), axis)
    indices = x.shape[axis] - 1 - order
    top = np.take(indices, np.arange(k), axis=axis)
    return [np.take_along_axis(x, top, axis=axis), top.astype(np.int32)]


def _canonicalize_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim if ndim else axis


def _ndim(x: Any) -> int:
    return len(getattr(typeof(x), "shape", ()))


def sort(
    operand: Array | Sequence[Array],
    dimension: int = -1,
    is_stable: bool = True,
    num_keys: int = 1,
) -> Any:
    """Sort `operand` along `dimension`; a sequence of operands is sorted together by its first
    `num_keys` arrays (lexicographically) and returned as a tuple.

    Raises:
        TypeError: an empty sequence, or operands of different shapes.
        ValueError: `num_keys` out of range, or `dimension` out of bounds.
    """
    if isinstance(operand, Sequence):
        if len(operand) == 0:
            raise TypeError("Sort requires at least one operand")
        if not 1 <= num_keys <= len(operand):
            raise ValueError(
                f"num_keys={num_keys} must be between 1 and len(operand)={len(operand)}"
            )
        dimension = _canonicalize_axis(dimension, _ndim(operand[0]))
        return tuple(
            sort_p.bind(*operand, dimension=dimension, is_stable=is_stable, num_keys=num_keys)
        )
    if num_keys != 1:
        raise ValueError(f"num_keys={num_keys} must equal 1 for a single operand.")
    dimension = _canonicalize_axis(dimension, _ndim(operand))
    return sort_p.bind(operand, dimension=dimension, is_stable=is_stable, num_keys=1)[0]


def sort_key_val(
    keys: Array, values: Array, dimension: int = -1, is_stable: bool = True
) -> tuple[Array, Array]:
    """Sort `keys` along `dimension` and permute `values` the same way."""
    dimension = _canonicalize_axis(dimension, _ndim(keys))
    k, v = sort_p.bind(keys, values, dimension=dimension, is_stable=is_stable, num_keys=1)
    return k, v


def top_k(operand: Array, k: int, *, axis: int = -1) -> list[Array]:
    """`[values, indices]`: the `k` largest entries along `axis` (descending) and their int32
    indices (a list, as JAX returns)."""
    k = int(k)
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    axis = _canonicalize_axis(axis, _ndim(operand))
    values, indices = top_k_p.bind(operand, k=k, axis=axis)
    return [values, indices]


__all__ = [
    "sort",
    "sort_key_val",
    "sort_p",
    "top_k",
    "top_k_p",
]
