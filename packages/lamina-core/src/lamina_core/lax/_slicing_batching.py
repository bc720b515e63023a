"""Batching rules of the slicing primitives: slice, dynamic_slice and dynamic_update_slice.

`slice` keeps the mapped axis where it is and takes it whole. As in JAX, a batched
`dynamic_slice` becomes a `gather` and a batched `dynamic_update_slice` a `scatter` (both
clamping, as the dynamic ops do), with the start indices gathered into one index array and
the mapped axis at the front of the result. The gather and scatter equations are emitted
here, with the dimension numbers JAX's gather and scatter batching rules give these
particular windows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core.interpreters import AxisData, BatchDim, batching_rules
from lamina_core.lax._batching_common import bdim_at_front, moveaxis, ndim_of, shape_of
from lamina_core.lax._gather_scatter import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
    gather,
    scatter_p,
)
from lamina_core.lax._joining import concatenate
from lamina_core.lax._slicing import dynamic_slice_p, dynamic_update_slice_p, slice, slice_p
from lamina_core.lax._structural import broadcast, broadcast_in_dim


def _slice_batch(
    axis_data: AxisData,
    vals: Sequence[Any],
    dims: Sequence[BatchDim],
    *,
    start_indices: Sequence[int],
    limit_indices: Sequence[int],
    strides: Sequence[int] | None,
) -> tuple[Any, BatchDim]:
    (x,), (bdim,) = vals, dims
    assert bdim is not None
    starts, limits = list(start_indices), list(limit_indices)
    starts.insert(bdim, 0)
    limits.insert(bdim, shape_of(x)[bdim])
    steps = None
    if strides is not None:
        steps = list(strides)
        steps.insert(bdim, 1)
    return slice(x, starts, limits, steps), bdim


def _index_array(indices: Sequence[Any], dims: Sequence[BatchDim]) -> tuple[Any, BatchDim]:
    """The scalar start indices as one index vector, or (when any is mapped) as a matrix of
    one index vector per example, mapped at 0."""
    if not indices:
        return np.array([], np.int32), None
    size = next((shape_of(i)[d] for i, d in zip(indices, dims, strict=True) if d is not None), None)
    if size is None:
        return concatenate([broadcast(i, (1,)) for i in indices], 0), None
    columns = [
        broadcast_in_dim(i, (size, 1), (0,) if d is not None else ())
        for i, d in zip(indices, dims, strict=True)
    ]
    return concatenate(columns, 1), 0


def _shifted(dims: Sequence[int]) -> tuple[Any, ...]:
    # NumPy integers, as JAX's rules shift dimension numbers (they print as `np.int64(1)`).
    return tuple(np.add(1, dims))


def _dynamic_slice_batch(
    axis_data: AxisData,
    vals: Sequence[Any],
    dims: Sequence[BatchDim],
    *,
    slice_sizes: Sequence[int],
) -> tuple[Any, BatchDim]:
    (x, *indices), (x_bdim, *index_bdims) = vals, dims
    window = tuple(range(len(indices)))
    index, index_bdim = _index_array(indices, index_bdims)
    clip = GatherScatterMode.CLIP
    if index_bdim is None:
        # One window for all examples: the mapped axis joins it, whole.
        assert x_bdim is not None
        x = moveaxis(x, x_bdim, 0)
        dnums = GatherDimensionNumbers(
            offset_dims=(0, *_shifted(window)),
            collapsed_slice_dims=(),
            start_index_map=_shifted(window),
        )
        sizes = (shape_of(x)[0], *slice_sizes)
        out = gather(
            x, index, dnums, sizes, unique_indices=True, indices_are_sorted=True, mode=clip
        )
        return out, 0
    if x_bdim is None:
        # One operand, a window per example: the examples' windows may overlap.
        dnums = GatherDimensionNumbers(
            offset_dims=tuple(1 + d for d in window),
            collapsed_slice_dims=(),
            start_index_map=window,
        )
        out = gather(x, index, dnums, slice_sizes, mode=clip)
        return out, 0
    # A window per example into its own operand: the mapped axes are batching dimensions.
    x = moveaxis(x, x_bdim, 0)
    dnums = GatherDimensionNumbers(
        offset_dims=_shifted(window),
        collapsed_slice_dims=(),
        start_index_map=_shifted(window),
        operand_batching_dims=(0,),
        start_indices_batching_dims=(0,),
    )
    sizes = (0 if shape_of(x)[0] == 0 else 1, *slice_sizes)
    out = gather(x, index, dnums, sizes, unique_indices=True, indices_are_sorted=True, mode=clip)
    return out, 0


def _dynamic_update_slice_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim]
) -> tuple[Any, BatchDim]:
    (x, update, *indices), (x_bdim, update_bdim, *index_bdims) = vals, dims
    window = tuple(range(ndim_of(update) - (update_bdim is not None)))
    index, index_bdim = _index_array(indices, index_bdims)
    size = axis_data.size
    x = bdim_at_front(x, x_bdim, size)
    update = bdim_at_front(update, update_bdim, size)
    if index_bdim is None:
        # One window for all examples: the mapped axis joins it.
        dnums = ScatterDimensionNumbers(
            update_window_dims=(0, *_shifted(window)),
            inserted_window_dims=(),
            scatter_dims_to_operand_dims=_shifted(window),
        )
    else:
        dnums = ScatterDimensionNumbers(
            update_window_dims=_shifted(window),
            inserted_window_dims=(),
            scatter_dims_to_operand_dims=_shifted(window),
            operand_batching_dims=(0,),
            scatter_indices_batching_dims=(0,),
        )
    out = scatter_p.bind(
        x,
        index,
        update,
        update_jaxpr=None,
        update_consts=(),
        dimension_numbers=dnums,
        indices_are_sorted=True,
        unique_indices=True,
        mode=GatherScatterMode.CLIP,
    )
    return out, 0


batching_rules.set(slice_p, _slice_batch)
batching_rules.set(dynamic_slice_p, _dynamic_slice_batch)
batching_rules.set(dynamic_update_slice_p, _dynamic_update_slice_batch)
