"""`x[idx]` in general, as one gather: the indices, dimension numbers and bookkeeping.

`to_gather` follows JAX's `_index_to_gather` step by step, in the same order, because the
order in which it converts, normalizes and broadcasts the indices is the order of the
equations in the jaxpr. Advanced (integer array) indices are broadcast together and go
where the first one was if they are contiguous, else to the front, as in NumPy; strided
slices become iota index arrays; `None` axes and negative strides are applied afterwards
(`newaxis_dims`, `reversed_y_dims`). A scatter uses the same indexer, transposed.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lamina_core import lax as _lax
from lamina_core.ir import (
    DimExpr,
    InconclusiveDimensionOperation,
    dtypes,
    is_symbolic_dim,
    max_dim,
    min_dim,
)
from lamina_core.numpy import _creation, _ufuncs
from lamina_core.numpy._index_parse import (
    IndexType,
    NDIndexer,
    ParsedIndex,
    as_index_array,
    index_dtype,
    is_array,
)
from lamina_core.numpy._shape import broadcast_arrays
from lamina_core.numpy._util import shape_of, step_is_ascending


@dataclass(frozen=True, slots=True)
class GatherIndexer:
    """Everything `x[idx]` (and `x.at[idx]`) needs to gather (or scatter)."""

    slice_shape: list[int]
    """The shape of `x[idx]`."""
    gather_slice_shape: list[int]
    """The `slice_sizes` of the gather."""
    gather_indices: Any
    """The gather's start indices, the index vector last."""
    dnums: _lax.GatherDimensionNumbers
    unique_indices: bool
    """True when there are no advanced indices, the only ones that can repeat."""
    indices_are_sorted: bool
    reversed_y_dims: list[int]
    """Result dimensions to reverse afterwards (slices with negative steps)."""
    newaxis_dims: tuple[int, ...]
    """Result dimensions that `None` indices add."""
    scalar_bool_dims: list[int]
    """Dimensions that scalar boolean indices add to the operand first."""


def _convert_sequences(indexer: NDIndexer) -> NDIndexer:
    out = []
    for idx in indexer.indices:
        if isinstance(idx.index, Sequence):
            array = _creation.asarray(idx.index)
            out.append(ParsedIndex(array, idx.typ, idx.consumed_axes, staged=not is_array(array)))
        else:
            out.append(idx)
    return indexer.with_indices(out)


def _expand_scalar_bools(indexer: NDIndexer) -> NDIndexer:
    """Scalar booleans as index arrays (`arange(1)` or `arange(0)`) into new size-1 axes."""
    shape = list(indexer.shape)
    out = []
    dim = 0
    for i, idx in enumerate(indexer.indices):
        if idx.typ == IndexType.BOOLEAN and np.ndim(idx.index) == 0:
            shape.insert(i, 1)
            out.append(ParsedIndex(np.arange(int(idx.index)), IndexType.ARRAY, (dim,)))
            dim += 1
        else:
            n = len(idx.consumed_axes)
            out.append(ParsedIndex(idx.index, idx.typ, tuple(range(dim, dim + n)), idx.staged))
            dim += n
    return NDIndexer(tuple(shape), out)


def _less_than_zero(idx: ParsedIndex) -> Any:
    # JAX compares its NumPy index arrays on the host and stages the others.
    if isinstance(idx.index, np.ndarray) and not idx.staged:
        return np.less(idx.index, 0)
    return _ufuncs.less(idx.index, 0)


def _normalize(indexer: NDIndexer) -> NDIndexer:
    """Negative indices wrapped: on the host for static ones, staged for arrays."""
    out = []
    for idx in indexer.indices:
        if idx.typ == IndexType.INTEGER:
            index = idx.index
            if not isinstance(index, np.unsignedinteger) and index < 0:
                index = index + indexer.shape[idx.consumed_axes[0]]
            out.append(ParsedIndex(index, idx.typ, idx.consumed_axes))
        elif idx.typ == IndexType.ARRAY and dtypes.dtype(idx.index).kind != "u":
            size = const(idx.index, indexer.shape[idx.consumed_axes[0]])
            negative = _less_than_zero(idx)
            wrapped = _lax.select(negative, _lax.add(idx.index, size), idx.index)
            out.append(ParsedIndex(wrapped, idx.typ, idx.consumed_axes))
        else:
            out.append(idx)
    return indexer.with_indices(out)


def const(example: Any, value: int) -> Any:
    """`value` typed like `example` (JAX's `lax._const`): a Python scalar, so weakly typed,
    if `example` is a weakly typed scalar of the scalar's default dtype; else a NumPy one."""
    dtype = dtypes.dtype(example)
    if is_symbolic_dim(value):
        return _dim_array(value, dtype)
    weak_scalar = dtypes.is_weakly_typed(example) and np.ndim(example) == 0
    if weak_scalar and dtype == dtypes.dtype(value, canonicalize=True):
        return value
    return np.array(value, dtype)


def _canonical_slice(s: slice, size: int) -> tuple[int, int, int]:
    """Start, step and length of `s` over an axis of `size` (JAX's `canonicalize_slice`)."""
    if is_symbolic_dim(size):
        return _symbolic_slice(s, size)
    start, stop, step = s.indices(size)
    if step > 0:
        length = max(0, (stop - start + step - 1) // step)
    else:
        length = max(0, (start - stop - step - 1) // -step)
    return start, step, length


def _symbolic_slice(s: slice, size: Any) -> tuple[Any, Any, Any]:
    """`_canonical_slice` over an axis of symbolic `size`: the bounds clamp with `min_dim`
    and `max_dim`, and the signs they need must be decidable (JAX's texts otherwise)."""
    step = 1 if s.step is None else _index_or_dim(s.step)
    ascending = step_is_ascending(
        step, "slice step cannot be zero", "slice with non-constant elements"
    )

    def clamp(i: Any, which: str) -> Any:
        try:
            nonnegative = i >= 0
        except InconclusiveDimensionOperation as err:
            raise InconclusiveDimensionOperation(
                f"In slice with non-constant elements the {which} ({i}) must be resolved "
                f"statically if it is >= 0.\nDetails: {err}",
                explain=False,
            ) from None
        if nonnegative:
            return min_dim(size, i) if ascending else min_dim(size - 1, i)
        return max_dim(0, size + i) if ascending else max_dim(-1, size + i)

    if s.start is None:
        start = 0 if ascending else size - 1
    else:
        start = clamp(_index_or_dim(s.start), "start")
    stop = (size if ascending else -1) if s.stop is None else clamp(_index_or_dim(s.stop), "stop")
    gap = step if ascending else -step
    distance = (stop - start) if ascending else (start - stop)
    return start, step, max_dim(0, distance + gap - 1) // gap


def _dim_array(d: Any, dtype: np.dtype) -> Any:
    """A symbolic dimension as an array of `dtype` (what `jnp.array(d, dtype)` stages)."""
    return _lax.convert_element_type(_lax.dimension_as_value(d), dtype)


def _index_or_dim(d: Any) -> Any:
    return d if type(d) is DimExpr else operator.index(d)


def to_gather(indexer: NDIndexer, *, normalize_indices: bool = True) -> GatherIndexer:
    """The gather that computes `x[idx]` for `x` of `indexer.shape`."""
    indexer.validate_slices()
    indexer = _convert_sequences(indexer)
    is_advanced = np.nonzero(
        [i.typ in (IndexType.ARRAY, IndexType.INTEGER) for i in indexer.indices]
    )[0]
    contiguous = bool(np.all(np.diff(is_advanced) == 1))
    indexer = indexer.expand_ellipses()
    scalar_bool_dims = [n for n, i in enumerate(indexer.indices) if i.typ == IndexType.BOOLEAN]
    indexer = _expand_scalar_bools(indexer)
    if normalize_indices:
        indexer = _normalize(indexer)

    advanced: list[Any] = []
    idx_advanced_axes: list[int] = []
    x_advanced_axes: list[int] = []
    if indexer.is_advanced_int_indexer():
        positions = [(i, p) for i, p in enumerate(indexer.indices) if p.typ != IndexType.NONE]
        for j, (i, p) in enumerate(positions):
            if p.typ in (IndexType.ARRAY, IndexType.INTEGER):
                advanced.append(as_index_array(p.index))
                idx_advanced_axes.append(i)
                x_advanced_axes.append(j)

    x_axis = y_axis = collapsed_y_axis = 0
    offset_dims: list[int] = []
    collapsed_slice_dims: list[int] = []
    start_index_map: list[int] = []
    dtype = index_dtype(indexer.shape)
    gather_indices: list[tuple[Any, int]] = []
    gather_indices_shape: list[int] = []
    slice_shape: list[int] = []
    newaxis_dims: list[int] = []
    reversed_y_dims: list[int] = []
    gather_slice_shape: list[int] = []

    for position, index in enumerate(indexer.indices):
        first = idx_advanced_axes[0] if idx_advanced_axes else -1
        if advanced and (position == first if contiguous else position == 0):
            arrays = broadcast_arrays(*advanced)
            shape = list(shape_of(arrays[0]))
            start_dim = len(gather_indices_shape)
            gather_indices.extend((_lax.convert_element_type(a, dtype), start_dim) for a in arrays)
            gather_indices_shape += shape
            start_index_map.extend(x_advanced_axes)
            collapsed_slice_dims.extend(x_advanced_axes)
            slice_shape.extend(shape)
            y_axis += len(shape)
            collapsed_y_axis += len(shape)
        if position in idx_advanced_axes:
            x_axis += 1
            gather_slice_shape.append(1)
            continue
        if index.typ in (IndexType.INTEGER, IndexType.ARRAY) and np.ndim(index.index) == 0:
            if indexer.shape[x_axis] == 0:
                raise IndexError(f"index is out of bounds for axis {x_axis} with size 0")
            converted = _lax.convert_element_type(index.index, dtype)
            gather_indices.append((converted, len(gather_indices_shape)))
            collapsed_slice_dims.append(x_axis)
            gather_slice_shape.append(1)
            start_index_map.append(x_axis)
            x_axis += 1
        elif index.typ == IndexType.NONE:
            slice_shape.append(1)
            newaxis_dims.append(y_axis)
            y_axis += 1
        elif index.typ == IndexType.SLICE:
            start, step, size = _canonical_slice(index.index, indexer.shape[x_axis])
            slice_shape.append(size)
            if step == 1:
                # A full slice needs no index: the gather takes the whole axis.
                if size != indexer.shape[x_axis]:
                    start_index = _lax.convert_element_type(start, dtype)
                    gather_indices.append((start_index, len(gather_indices_shape)))
                    start_index_map.append(x_axis)
                gather_slice_shape.append(size)
                offset_dims.append(collapsed_y_axis)
            else:
                if is_symbolic_dim(start):  # as `jnp.array(start, dtype)` stages it
                    base = _creation.array(_lax.dimension_as_value(start), dtype=dtype)
                else:
                    base = np.array(start, dtype)
                stride = np.array(step, dtype)
                iota = _lax.iota(dtype, size)
                indices = _ufuncs.add(base, _ufuncs.multiply(stride, iota))
                if step < 0:
                    reversed_y_dims.append(collapsed_y_axis)
                    indices = _lax.rev(indices, (0,))
                gather_slice_shape.append(1)
                gather_indices.append((indices, len(gather_indices_shape)))
                start_index_map.append(x_axis)
                gather_indices_shape.append(size)
                collapsed_slice_dims.append(x_axis)
            collapsed_y_axis += 1
            y_axis += 1
            x_axis += 1
        else:
            raise IndexError(f"Got unsupported indexer at position {position}: {index!r}")

    return GatherIndexer(
        slice_shape=slice_shape,
        gather_slice_shape=gather_slice_shape,
        gather_indices=_stack_indices(gather_indices, gather_indices_shape, dtype),
        dnums=_lax.GatherDimensionNumbers(
            offset_dims=tuple(offset_dims),
            collapsed_slice_dims=tuple(sorted(collapsed_slice_dims)),
            start_index_map=tuple(start_index_map),
        ),
        unique_indices=not advanced,
        indices_are_sorted=not advanced,
        reversed_y_dims=reversed_y_dims,
        newaxis_dims=tuple(newaxis_dims),
        scalar_bool_dims=scalar_bool_dims,
    )


def _stack_indices(gather_indices: list[tuple[Any, int]], shape: list[int], dtype: np.dtype) -> Any:
    """The index arrays, each broadcast from its start dimension, joined along a new last
    dimension (the index vector)."""
    if not gather_indices:
        return np.zeros((0,), dtype)
    if len(gather_indices) == 1:
        ((g, _),) = gather_indices
        return _lax.expand_dims(g, (len(shape_of(g)),))
    full = [*shape, 1]
    return _lax.concatenate(
        [
            _lax.broadcast_in_dim(g, full, tuple(range(i, i + len(shape_of(g)))))
            for g, i in gather_indices
        ],
        len(shape),
    )
