"""NumPy indexing: `x[idx]`, `jnp.take` and `jnp.take_along_axis`, staged as JAX stages them.

`x[idx]` tries, in JAX 0.10.2's order, a static slice (`slice`, `rev`, `squeeze`,
`expand_dims`), then a dynamic one (`dynamic_slice` with wrapped, possibly traced, scalar
starts), then one `gather`. Boolean masks must be concrete (their True positions become
integer index arrays). Static integer indices out of bounds are clamped, as XLA does, unless
`jax_check_static_indices` is on; on an axis of size 0 they are an `IndexError`. `take` and
`take_along_axis` are nested `jit`s named `_take` and `take_along_axis`, as in JAX.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from lamina_core import lax as _lax
from lamina_core.ir import dtypes, is_symbolic_dim
from lamina_core.numpy import _ufuncs, _ufuncs_composite
from lamina_core.numpy._index_gather import GatherIndexer, const, to_gather
from lamina_core.numpy._index_parse import (
    DynamicSlice,
    NDIndexer,
    StaticSlice,
    check_static_indices,
    wrap_negative,
)
from lamina_core.numpy._promote import broadcast_shapes, full_like
from lamina_core.numpy._shape import ravel
from lamina_core.numpy._take_one_hot import take_along_axis_one_hot
from lamina_core.numpy._util import (
    Array,
    ArrayLike,
    check_arraylike_or_traced_hi,
    dtype_of,
    shape_of,
)
from lamina_core.trace import Tracer, insert_pvary
from lamina_core.transforms import Jitted

_MODE = _lax.GatherScatterMode


def rewriting_take(
    arr: Array,
    idx: Any,
    *,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: str | _lax.GatherScatterMode | None = None,
    fill_value: Any = None,
    normalize_indices: bool = True,
) -> Array:
    """`arr[idx]` (and `arr.at[idx].get(...)`)."""
    indexer = NDIndexer.from_raw_indices(idx, shape_of(arr))
    if check_static_indices.value and (
        mode is None or _MODE.from_any(mode) == _MODE.PROMISE_IN_BOUNDS
    ):
        indexer.validate_static_indices(normalize_indices=normalize_indices)
    try:
        static = indexer.to_static_slice(normalize_indices=normalize_indices, mode=mode)
    except (TypeError, ValueError, IndexError):
        pass
    else:
        return _static_slice(arr, static)
    try:
        dynamic = indexer.to_dynamic_slice(mode=mode)
    except (TypeError, ValueError, IndexError):
        pass
    else:
        return _dynamic_slice(arr, dynamic, normalize_indices)
    return _gather(
        arr,
        indexer.expand_bool_indices(),
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        mode=mode,
        fill_value=fill_value,
        normalize_indices=normalize_indices,
    )


def _finish(
    result: Array, rev_axes: list[int], squeeze_axes: list[int], newaxis_dims: list[int]
) -> Array:
    if rev_axes:
        result = _lax.rev(result, rev_axes)
    if squeeze_axes:
        result = _lax.squeeze(result, squeeze_axes)
    if newaxis_dims:
        result = _lax.expand_dims(result, newaxis_dims)
    return result


def _static_slice(arr: Array, s: StaticSlice) -> Array:
    result = arr
    if not s.is_trivial(shape_of(arr)):
        result = _lax.slice(arr, s.start_indices, s.limit_indices, s.strides)
    return _finish(result, s.rev_axes, s.squeeze_axes, s.newaxis_dims)


def _dynamic_slice(arr: Array, s: DynamicSlice, normalize_indices: bool) -> Array:
    result = arr
    if not s.trivial:
        starts = s.start_indices
        if normalize_indices:
            starts = [wrap_negative(i, d) for i, d in zip(starts, shape_of(arr), strict=True)]
        operands = insert_pvary(arr, *starts)
        result = _lax.dynamic_slice_p.bind(*operands, slice_sizes=tuple(s.slice_sizes))
    return _finish(result, s.rev_axes, s.squeeze_axes, s.newaxis_dims)


def _check_fill_value(fill_value: Any) -> Any:
    if fill_value is None:
        return None
    if isinstance(fill_value, Tracer):
        fill_value._concretization_error("fill_value argument to indexed get()")
    if np.ndim(fill_value) != 0:
        raise ValueError("fill_value argument to indexed get() must be a scalar")
    return fill_value.item() if isinstance(fill_value, np.ndarray) else fill_value


def _gather(
    arr: Array,
    indexer: NDIndexer,
    *,
    indices_are_sorted: bool,
    unique_indices: bool,
    mode: Any,
    fill_value: Any,
    normalize_indices: bool,
) -> Array:
    g: GatherIndexer = to_gather(indexer, normalize_indices=normalize_indices)
    fill_value = _check_fill_value(fill_value)
    y = arr
    if g.scalar_bool_dims:
        y = _lax.expand_dims(y, g.scalar_bool_dims)
    # An empty result needs no gather (and `zeros(0)[array([], int32)]` could not have one).
    if 0 in g.slice_shape:
        return full_like(y, 0, shape=tuple(g.slice_shape))
    if 0 not in shape_of(g.gather_indices):
        y = _lax.gather(
            y,
            g.gather_indices,
            g.dnums,
            g.gather_slice_shape,
            unique_indices=unique_indices or g.unique_indices,
            indices_are_sorted=indices_are_sorted or g.indices_are_sorted,
            mode=mode,
            fill_value=fill_value,
        )
    if g.reversed_y_dims:
        y = _lax.rev(y, g.reversed_y_dims)
    return _lax.expand_dims(y, g.newaxis_dims)


# --- take and take_along_axis ---------------------------------------------------------------


def _canonicalize_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim if ndim else axis


def _take_body(
    a: ArrayLike,
    indices: ArrayLike,
    axis: int | None = None,
    out: None = None,
    mode: str | None = None,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    fill_value: Any = None,
) -> Array:
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    check_arraylike_or_traced_hi("take", a, indices)
    if axis is None:
        a = ravel(a)
        axis_idx = 0
    else:
        axis_idx = _canonicalize_axis(axis, len(shape_of(a)))
    if mode is None or mode == "fill":
        gather_mode = _MODE.FILL_OR_DROP
        # gather takes no negative indices: wrap them here.
        size = shape_of(a)[axis_idx]
        negative = _ufuncs.less(indices, 0)
        if is_symbolic_dim(size):
            size = const(indices, size)
        indices = _ufuncs_composite._where(negative, _ufuncs.add(indices, size), indices)
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
    elif mode == "wrap":
        size_const = const(indices, shape_of(a)[axis_idx])
        indices = _ufuncs_composite.remainder(indices, size_const)
        gather_mode = _MODE.PROMISE_IN_BOUNDS
    elif mode == "clip":
        gather_mode = _MODE.CLIP
    else:
        raise ValueError(f"Invalid mode '{mode}' for np.take")
    index_dims = len(shape_of(indices))
    slice_sizes = list(shape_of(a))
    indices_size = math.prod(shape_of(indices))
    if slice_sizes[axis_idx] == 0:
        if indices_size != 0:
            raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
        return a
    if indices_size == 0:
        out_shape = slice_sizes[:axis_idx] + list(shape_of(indices)) + slice_sizes[axis_idx + 1 :]
        return full_like(a, 0, shape=tuple(out_shape))
    slice_sizes[axis_idx] = 1
    rank = len(shape_of(a))
    dnums = _lax.GatherDimensionNumbers(
        offset_dims=tuple(
            list(range(axis_idx)) + list(range(axis_idx + index_dims, rank + index_dims - 1))
        ),
        collapsed_slice_dims=(axis_idx,),
        start_index_map=(axis_idx,),
    )
    return _lax.gather(
        a,
        indices[..., None],
        dimension_numbers=dnums,
        slice_sizes=tuple(slice_sizes),
        mode=gather_mode,
        unique_indices=unique_indices,
        indices_are_sorted=indices_are_sorted,
        fill_value=fill_value,
    )


_take_body.__name__ = _take_body.__qualname__ = "_take"
_take: Any = Jitted(
    _take_body,
    static_argnames=("axis", "mode", "unique_indices", "indices_are_sorted", "fill_value"),
)


def take(
    a: ArrayLike,
    indices: ArrayLike,
    axis: int | None = None,
    out: None = None,
    mode: str | None = None,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    fill_value: Any = None,
) -> Array:
    """Elements of `a` at `indices` along `axis` (of the flattened `a` when None).

    Out-of-bounds indices give `fill_value` (NaN for floats) in the default `'fill'` mode;
    `'clip'` clamps them and `'wrap'` wraps them around.
    """
    # Static arguments go by keyword: the jit takes its static arguments by name.
    return _take(
        a,
        indices,
        axis=None if axis is None else operator.index(axis),
        out=out,
        mode=mode,
        unique_indices=unique_indices,
        indices_are_sorted=indices_are_sorted,
        fill_value=fill_value,
    )


def _wrap_index(index: Array, axis_size: int) -> Array:
    """`index < 0 ? index + axis_size : index` for an integer array (JAX's
    `_normalize_index`)."""
    if dtypes.issubdtype(dtype_of(index), np.unsignedinteger):
        return index
    size = const(index, axis_size)
    return _lax.select(_ufuncs.less(index, 0), _lax.add(index, size), index)


def _take_along_axis_body(
    arr: ArrayLike,
    indices: ArrayLike,
    axis: int | None = -1,
    mode: str | _lax.GatherScatterMode | None = None,
    fill_value: Any = None,
    *,
    wrap_negative_indices: bool | None = None,
) -> Array:
    check_arraylike_or_traced_hi("take_along_axis", arr, indices)
    a: Any = arr
    index_dtype = dtype_of(indices)
    idx_shape = shape_of(indices)
    if not dtypes.issubdtype(index_dtype, np.integer):
        raise TypeError(f"take_along_axis indices must be of integer type, got {index_dtype}")
    if axis is None:
        if len(idx_shape) != 1:
            raise ValueError(
                f"take_along_axis indices must be 1D if axis=None, got shape {idx_shape}"
            )
        a, axis = ravel(a), 0
    rank = len(shape_of(a))
    if rank != len(idx_shape):
        raise ValueError(
            f"indices and arr must have the same number of dimensions; {len(idx_shape)} vs. {rank}"
        )
    axis_int = _canonicalize_axis(operator.index(axis), rank)
    axis_size = shape_of(a)[axis_int]
    arr_shape = list(shape_of(a))
    arr_shape[axis_int] = 1
    out_shape = broadcast_shapes(idx_shape, tuple(arr_shape))
    if axis_size == 0:
        return _lax.full(out_shape, 0, dtype_of(a))
    if wrap_negative_indices is None:
        # JAX's legacy default: wrap unless the caller promises in-bounds indices.
        wrap_negative_indices = mode != "promise_in_bounds"
    if wrap_negative_indices:
        big = axis_size > np.iinfo(np.int32).max
        index_dtype = np.dtype(np.int64 if big else np.int32)
    indices = _lax.convert_element_type(indices, index_dtype)
    if wrap_negative_indices:
        indices = _wrap_index(indices, axis_size)
    if mode == "one_hot":
        return take_along_axis_one_hot(a, indices, axis_int)
    index_dims = [i for i, d in enumerate(idx_shape) if i == axis_int or d != 1]
    gather_index_shape = (*(out_shape[i] for i in index_dims), 1)
    gather_indices = _lax.reshape(indices, gather_index_shape)
    slice_sizes: list[int] = []
    offset_dims: list[int] = []
    start_index_map: list[int] = []
    collapsed_slice_dims: list[int] = []
    operand_batching_dims: list[int] = []
    start_indices_batching_dims: list[int] = []
    dims_to_squeeze: list[int] = []
    new_i = j = 0
    for i in range(rank):
        if i == axis_int:
            slice_sizes.append(1)
            start_index_map.append(new_i)
            collapsed_slice_dims.append(new_i)
            new_i += 1
            j += 1
        elif idx_shape[i] == 1:
            # The whole axis of `a` is taken; no iota index is needed.
            offset_dims.append(i)
            slice_sizes.append(arr_shape[i])
            new_i += 1
        elif arr_shape[i] == 1:
            dims_to_squeeze.append(i)
            j += 1
        else:
            slice_sizes.append(0 if arr_shape[i] == 0 else 1)
            operand_batching_dims.append(new_i)
            start_indices_batching_dims.append(j)
            new_i += 1
            j += 1
    a = _lax.squeeze(a, dims_to_squeeze)
    dnums = _lax.GatherDimensionNumbers(
        offset_dims=tuple(offset_dims),
        collapsed_slice_dims=tuple(collapsed_slice_dims),
        start_index_map=tuple(start_index_map),
        operand_batching_dims=tuple(operand_batching_dims),
        start_indices_batching_dims=tuple(start_indices_batching_dims),
    )
    return _lax.gather(
        a,
        gather_indices,
        dnums,
        tuple(slice_sizes),
        mode="fill" if mode is None else mode,
        fill_value=fill_value,
    )


_take_along_axis_body.__name__ = _take_along_axis_body.__qualname__ = "take_along_axis"
_take_along_axis: Any = Jitted(
    _take_along_axis_body,
    static_argnames=("axis", "mode", "fill_value", "wrap_negative_indices"),
)


def take_along_axis(
    arr: ArrayLike,
    indices: ArrayLike,
    axis: int | None = -1,
    mode: str | _lax.GatherScatterMode | None = None,
    fill_value: Any = None,
    *,
    wrap_negative_indices: bool | None = None,
) -> Array:
    """Elements of `arr` at `indices` along `axis`, pairing the other axes of `arr` and
    `indices` (broadcast), as `numpy.take_along_axis`.

    Out-of-bounds indices give the fill value in the default mode; negative ones wrap unless
    `mode='promise_in_bounds'` (JAX's legacy default) or `wrap_negative_indices=False`.
    """
    return _take_along_axis(
        arr,
        indices,
        axis=axis,
        mode=mode,
        fill_value=fill_value,
        wrap_negative_indices=wrap_negative_indices,
    )


def getitem(arr: Array, idx: Any) -> Array:
    """`arr[idx]` for tracers and device arrays."""
    if type(idx) is int:  # the commonest index (`keys[i]`, `xs[0]`): no parsing
        shape = shape_of(arr)
        if shape and type(shape[0]) is int:  # (a symbolic axis takes the general path)
            size = shape[0]
            i = idx + size if idx < 0 else idx
            if 0 <= i < size:  # out of bounds: the general path's dynamic slice or error
                # What `rewriting_take` stages for it: a slice (none when it keeps the whole
                # axis) and a squeeze of the axis.
                result = arr
                if size != 1:
                    rest = list(shape[1:])
                    result = _lax.slice(arr, [i] + [0] * len(rest), [i + 1, *rest])
                return _lax.squeeze(result, (0,))
    return rewriting_take(arr, idx)


__all__ = ["take", "take_along_axis"]


def iter_item(x: Any, i: int) -> Any:
    """Element `i` of iterating over `x`: JAX's `index_in_dim` (a unit-stride slice of the
    leading axis, squeezed), not an indexing expression."""
    shape = shape_of(x)
    rest = shape[1:]
    sliced = _lax.slice(x, (i, *(0 for _ in rest)), (i + 1, *rest), (1,) * len(shape))
    return _lax.squeeze(sliced, (0,))
