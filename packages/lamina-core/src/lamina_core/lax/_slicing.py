"""Slicing primitives: slice, dynamic_slice and dynamic_update_slice, and the lax functions
over one axis (slice_in_dim, index_in_dim, dynamic_slice_in_dim, ...).

Dynamic start indices follow XLA: each is clamped so that the whole slice lies inside the
operand, which the NumPy references reproduce. Negative indices are wrapped before binding
(statically for Python and NumPy integers, with `lt`/`add`/`select_n` for traced ones), as
JAX's lax functions do, so the primitives themselves only ever clamp.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from lamina_core.ir import (
    AbstractValue,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    dtypes,
    impl_rules,
    is_symbolic_dim,
)
from lamina_core.lax import _checks as c
from lamina_core.lax._dim_value import dimension_as_value
from lamina_core.lax._elementwise import add, lt
from lamina_core.lax._selection import select_n
from lamina_core.lax._shape import (
    canonical_shape,
    check_shapelike,
    expand_dims,
    shape_of,
    squeeze,
)
from lamina_core.lax._structural import _convert_element_type
from lamina_core.lax._types import Array
from lamina_core.trace import insert_pvary
from lamina_core.transforms import Jitted

slice_p: Final = Primitive("slice")
dynamic_slice_p: Final = Primitive("dynamic_slice")
dynamic_update_slice_p: Final = Primitive("dynamic_update_slice")


# --- slice -----------------------------------------------------------------------------------


def _strided_size(size: int, stride: int) -> int:
    return 0 if size < 1 else (size - 1) // stride + 1


def _dim(d: Any) -> Any:
    """A dimension or index as a Python int, a symbolic dimension as it is."""
    return d if is_symbolic_dim(d) else int(d)


@abstract_eval_rules.register(slice_p)
def _slice_abstract_eval(
    x: AbstractValue,
    *,
    start_indices: Sequence[int],
    limit_indices: Sequence[int],
    strides: Sequence[int] | None,
) -> ShapedArray:
    aval = c.array_aval("slice", x)
    check_shapelike("slice", "start_indices", start_indices)
    check_shapelike("slice", "limit_indices", limit_indices)
    if aval.ndim != len(start_indices):
        raise TypeError(
            f"slice start_indices must have length equal to the number of dimensions of the "
            f"operand, got indices {start_indices} for operand shape {aval.shape}."
        )
    if len(start_indices) != len(limit_indices):
        raise TypeError(
            f"slice limit_indices must have the same length as start_indices, got "
            f"start_indices {start_indices} and limit_indices {limit_indices}."
        )
    if not all(d >= lim for d, lim in zip(aval.shape, limit_indices, strict=True)):
        raise TypeError(
            f"slice limit_indices must be less than or equal to operand shape, got "
            f"limit_indices {limit_indices} for operand shape {aval.shape}."
        )
    if not all(lim >= s for s, lim in zip(start_indices, limit_indices, strict=True)):
        raise TypeError(
            f"slice limit_indices must be greater than or equal to start_indices, got "
            f"start_indices {start_indices} and limit_indices {limit_indices}."
        )
    sizes = [_dim(lim) - _dim(s) for s, lim in zip(start_indices, limit_indices, strict=True)]
    if strides is not None and tuple(strides) != (1,) * aval.ndim:
        check_shapelike("slice", "strides", strides)
        if len(strides) != aval.ndim:
            raise TypeError(
                f"slice strides must have length equal to the number of dimensions of the "
                f"operand, got strides {strides} for operand shape {aval.shape}."
            )
        # JAX accepts a zero stride here and then divides by it; say what is wrong instead.
        if not all(s > 0 for s in strides):
            raise TypeError(f"slice strides must be positive, got {strides}")
        sizes = [_strided_size(d, int(s)) for d, s in zip(sizes, strides, strict=True)]
    return ShapedArray(tuple(sizes), aval.dtype, aval.weak_type)


@impl_rules.register(slice_p)
def _slice_impl(
    x: np.ndarray,
    *,
    start_indices: Sequence[int],
    limit_indices: Sequence[int],
    strides: Sequence[int] | None,
) -> np.ndarray:
    steps = strides if strides is not None else (1,) * len(start_indices)
    index = tuple(
        builtins.slice(int(s), int(lim), int(st))
        for s, lim, st in zip(start_indices, limit_indices, steps, strict=True)
    )
    return x[index]


def slice(
    operand: Array,
    start_indices: Sequence[int],
    limit_indices: Sequence[int],
    strides: Sequence[int] | None = None,
) -> Array:
    """`operand[start:limit:stride]` in every dimension, with static bounds."""
    return slice_p.bind(
        operand,
        start_indices=tuple(start_indices),
        limit_indices=tuple(limit_indices),
        strides=None if strides is None else tuple(strides),
    )


def slice_in_dim(
    operand: Array,
    start_index: int | None,
    limit_index: int | None,
    stride: int = 1,
    axis: int = 0,
) -> Array:
    """`operand[..., start:limit:stride]` along `axis`; negative bounds count from the end."""
    shape = shape_of(operand)
    axis = int(axis)
    size = shape[axis]
    start = operator.index(start_index) if start_index is not None else 0
    limit = operator.index(limit_index) if limit_index is not None else size
    starts = [0] * len(shape)
    limits = list(shape)
    strides = [1] * len(shape)
    starts[axis] = start + size if start < 0 else start
    limits[axis] = limit + size if limit < 0 else limit
    strides[axis] = operator.index(stride)
    return slice(operand, starts, limits, strides)


def index_in_dim(operand: Array, index: int, axis: int = 0, keepdims: bool = True) -> Array:
    """The slice at static `index` along `axis`, kept as a size-1 axis unless not `keepdims`."""
    index, axis = operator.index(index), int(axis)
    size = shape_of(operand)[axis]
    wrapped = index + size if index < 0 else index
    if not 0 <= wrapped < size:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {size}")
    result = slice_in_dim(operand, wrapped, wrapped + 1, 1, axis)
    return result if keepdims else squeeze(result, (axis,))


# --- dynamic_slice and dynamic_update_slice -------------------------------------------------


def _check_indices(prim: str, avals: Sequence[AbstractValue], colon: str) -> None:
    indices = [c.array_aval(prim, a) for a in avals]
    if any(i.dtype != indices[0].dtype or c.kind_of(i.dtype) not in c.INT for i in indices):
        raise TypeError(
            f"index arguments to {prim} must be integers of the same type, got{colon} "
            + ", ".join(i.dtype.name for i in indices)
        )


def _clamped_starts(
    indices: Sequence[np.ndarray], shape: Sequence[int], sizes: Sequence[int]
) -> list[int]:
    # XLA moves an out-of-range start so that the whole window fits in the operand.
    return [min(max(int(i), 0), d - s) for i, d, s in zip(indices, shape, sizes, strict=True)]


@abstract_eval_rules.register(dynamic_slice_p)
def _dynamic_slice_abstract_eval(
    x: AbstractValue, *indices: AbstractValue, slice_sizes: Sequence[int]
) -> ShapedArray:
    aval = c.array_aval("dynamic_slice", x)
    index_avals = [c.array_aval("dynamic_slice", i) for i in indices]
    if len(slice_sizes) != aval.ndim or len(indices) != aval.ndim:
        raise TypeError(
            f"dynamic_slice needs one start index and one slice size per operand dimension, "
            f"got {len(indices)} indices and slice_sizes {tuple(slice_sizes)} for operand "
            f"shape {aval.shape}."
        )
    if not all(d >= s for d, s in zip(aval.shape, slice_sizes, strict=True)):
        raise TypeError(
            f"slice slice_sizes must be less than or equal to operand shape, got slice_sizes "
            f"{slice_sizes} for operand shape {aval.shape}."
        )
    if not all(s >= 0 for s in slice_sizes):
        raise TypeError(
            f"slice slice_sizes must be greater than or equal to zero, got slice_sizes of "
            f"{slice_sizes}."
        )
    if any(i.ndim != 0 for i in index_avals):
        raise TypeError(
            f"start_indices arguments to dynamic_slice must be scalars,  got indices "
            f"{tuple(index_avals)}"
        )
    _check_indices("dynamic_slice", index_avals, ":")
    return ShapedArray(tuple(slice_sizes), aval.dtype, aval.weak_type)


@impl_rules.register(dynamic_slice_p)
def _dynamic_slice_impl(
    x: np.ndarray, *indices: np.ndarray, slice_sizes: Sequence[int]
) -> np.ndarray:
    starts = _clamped_starts(indices, np.shape(x), slice_sizes)
    return x[tuple(np.s_[s : s + n] for s, n in zip(starts, slice_sizes, strict=True))]


@abstract_eval_rules.register(dynamic_update_slice_p)
def _dynamic_update_slice_abstract_eval(
    x: AbstractValue, update: AbstractValue, *indices: AbstractValue
) -> ShapedArray:
    aval = c.array_aval("dynamic_update_slice", x)
    upd = c.array_aval("dynamic_update_slice", update)
    index_avals = [c.array_aval("dynamic_update_slice", i) for i in indices]
    if aval.ndim != upd.ndim:
        raise TypeError(
            f"dynamic_update_slice update must have the same rank as operand, got update "
            f"shape {upd.shape} for operand shape {aval.shape}."
        )
    if aval.ndim != len(indices):
        raise TypeError(
            f"dynamic_update_slice start_indices must have length equal to the rank of "
            f"operand, got indices {tuple(index_avals)} for operand shape "
            f"{aval.shape}."
        )
    if not all(d >= u for d, u in zip(aval.shape, upd.shape, strict=True)):
        raise TypeError(
            f"dynamic_update_slice update shape must be smaller than operand shape, got "
            f"update shape {upd.shape} for operand shape {aval.shape}."
        )
    if any(i.ndim != 0 for i in index_avals):
        raise TypeError(
            f"start_indices arguments to dynamic_update_slice must be scalars, got indices "
            f"{tuple(index_avals)}"
        )
    c.check_same_dtypes("dynamic_update_slice", [aval, upd])
    _check_indices("dynamic_update_slice", index_avals, "")
    weak = aval.weak_type and upd.weak_type and all(i.weak_type for i in index_avals)
    return ShapedArray(aval.shape, aval.dtype, weak)


@impl_rules.register(dynamic_update_slice_p)
def _dynamic_update_slice_impl(
    x: np.ndarray, update: np.ndarray, *indices: np.ndarray
) -> np.ndarray:
    sizes = np.shape(update)
    starts = _clamped_starts(indices, np.shape(x), sizes)
    out = np.array(x, copy=True)
    out[tuple(np.s_[s : s + n] for s, n in zip(starts, sizes, strict=True))] = update
    return out


def _is_static_int(i: Any) -> bool:
    return isinstance(i, (int, np.integer)) and not isinstance(i, bool)


def _normalize_indices(
    operand: Array, start_indices: Any, allow_negative: bool | Sequence[bool]
) -> list[Any]:
    """Wrap negative start indices by the dimension size, as JAX's lax functions do."""
    shape = shape_of(operand)
    if len(start_indices) != len(shape):
        raise ValueError(
            f"Length of slice indices must match number of operand dimensions "
            f"({len(start_indices)} vs {shape})"
        )
    if not isinstance(start_indices, Sequence):
        if len(shape_of(start_indices)) != 1:
            raise ValueError(f"Slice indices must be a 1D sequence, got {shape_of(start_indices)}")
        start_indices = list(start_indices)
    if isinstance(allow_negative, bool):
        allow_negative = [allow_negative] * len(shape)
    out: list[Any] = []
    for i, d, allow in zip(start_indices, shape, allow_negative, strict=True):
        dtype = dtypes.dtype(i, canonicalize=True)
        if dtype.kind == "u":
            out.append(i)
        elif _is_static_int(i) and not is_symbolic_dim(d):
            if not allow and i < 0:
                raise ValueError(
                    f"Index {i} is out of bounds for dimension {d} if allow_negative_indices=False"
                )
            out.append(_convert_element_type(i + d if allow and i < 0 else i, dtype))
        elif _is_static_int(i):
            # Along a symbolic axis the size is staged (JAX's `dim_as_value`, even when unused).
            d_value = dimension_as_value(d)
            if not allow and i < 0:
                raise ValueError(
                    f"Index {i} is out of bounds for dimension {d} if allow_negative_indices=False"
                )
            out.append(add(i, _convert_element_type(d_value, dtype)) if allow and i < 0 else i)
        elif allow:
            # i < 0 ? i + d : i, staged with jnp's promotion: a weak i is made strong to meet d.
            # JAX compares a NumPy index with NumPy (no equation) and stages the rest.
            if isinstance(i, np.ndarray):
                is_negative: Any = np.less(i, 0)
            else:
                is_negative = lt(i, _convert_element_type(0, dtype, True))
            wrapped = add(_convert_element_type(i, dtype), _convert_element_type(d, dtype))
            out.append(select_n(is_negative, i, wrapped))
        else:
            out.append(i)
    return out


def dynamic_slice(
    operand: Array,
    start_indices: Any,
    slice_sizes: Sequence[int],
    *,
    allow_negative_indices: bool | Sequence[bool] = True,
) -> Array:
    """The `slice_sizes` window of `operand` at (possibly traced) `start_indices`.

    Starts are clamped, as in XLA, so that the window lies inside the operand.
    """
    starts = _normalize_indices(operand, start_indices, allow_negative_indices)
    sizes = canonical_shape(slice_sizes)
    return dynamic_slice_p.bind(*insert_pvary(operand, *starts), slice_sizes=sizes)


def dynamic_update_slice(
    operand: Array,
    update: Array,
    start_indices: Any,
    *,
    allow_negative_indices: bool | Sequence[bool] = True,
) -> Array:
    """`operand` with `update` written at (possibly traced, clamped) `start_indices`."""
    starts = _normalize_indices(operand, start_indices, allow_negative_indices)
    return dynamic_update_slice_p.bind(*insert_pvary(operand, update, *starts))


def _zero_like(index: Any) -> Any:
    """A zero start index of `index`'s type: a Python int stays one, others become NumPy."""
    dtype = dtypes.dtype(index, canonicalize=True)
    if dtypes.is_python_scalar(index):
        return 0 if dtype == dtypes.dtype(0, canonicalize=True) else np.array(0, dtype)
    return np.array(0, dtype)


def dynamic_slice_in_dim(
    operand: Array,
    start_index: Any,
    slice_size: int,
    axis: int = 0,
    *,
    allow_negative_indices: bool = True,
) -> Array:
    """`dynamic_slice` along one `axis`; other axes are taken whole."""
    shape = shape_of(operand)
    axis = int(axis)
    starts = [_zero_like(start_index)] * len(shape)
    starts[axis] = start_index
    sizes = list(shape)
    sizes[axis] = operator.index(slice_size)
    allow = [False] * len(shape)
    allow[axis] = allow_negative_indices
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow)


def _index_in_dim_body(
    operand: Array, index: Any, axis: int, keepdims: bool, allow_negative_indices: bool
) -> Array:
    result = dynamic_slice_in_dim(
        operand, index, 1, axis, allow_negative_indices=allow_negative_indices
    )
    return result if keepdims else squeeze(result, (axis,))


# JAX stages these two in a nested jit named after the public function.
_index_in_dim_body.__name__ = "dynamic_index_in_dim"
_dynamic_index_in_dim: Final = Jitted(
    _index_in_dim_body, static_argnames=("axis", "keepdims", "allow_negative_indices")
)


def dynamic_index_in_dim(
    operand: Array,
    index: Any,
    axis: int = 0,
    keepdims: bool = True,
    *,
    allow_negative_indices: bool = True,
) -> Array:
    """The slice at (possibly traced) `index` along `axis`, staged in a nested `jit`."""
    return _dynamic_index_in_dim(
        operand,
        index,
        axis=int(axis),
        keepdims=bool(keepdims),
        allow_negative_indices=allow_negative_indices,
    )


def dynamic_update_slice_in_dim(
    operand: Array,
    update: Array,
    start_index: Any,
    axis: int,
    *,
    allow_negative_indices: bool = True,
) -> Array:
    """`dynamic_update_slice` at `start_index` along `axis` and 0 along the other axes."""
    axis = int(axis)
    ndim = len(shape_of(operand))
    starts = [_zero_like(start_index)] * ndim
    starts[axis] = start_index
    allow = [False] * ndim
    allow[axis] = allow_negative_indices
    return dynamic_update_slice(operand, update, starts, allow_negative_indices=allow)


def _update_index_in_dim_body(
    operand: Array, update: Array, index: Any, axis: int, allow_negative_indices: bool
) -> Array:
    if len(shape_of(update)) != len(shape_of(operand)):
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(
        operand, update, index, axis, allow_negative_indices=allow_negative_indices
    )


_update_index_in_dim_body.__name__ = "dynamic_update_index_in_dim"
_dynamic_update_index_in_dim: Final = Jitted(
    _update_index_in_dim_body, static_argnames=("axis", "allow_negative_indices")
)


def dynamic_update_index_in_dim(
    operand: Array,
    update: Array,
    index: Any,
    axis: int,
    *,
    allow_negative_indices: bool = True,
) -> Array:
    """Write `update` (with or without the `axis` dimension) at `index` along `axis`, staged
    in a nested `jit`."""
    return _dynamic_update_index_in_dim(
        operand, update, index, axis=int(axis), allow_negative_indices=allow_negative_indices
    )


__all__ = [
    "dynamic_index_in_dim",
    "dynamic_slice",
    "dynamic_slice_in_dim",
    "dynamic_slice_p",
    "dynamic_update_index_in_dim",
    "dynamic_update_slice",
    "dynamic_update_slice_in_dim",
    "dynamic_update_slice_p",
    "index_in_dim",
    "slice",
    "slice_in_dim",
    "slice_p",
]
