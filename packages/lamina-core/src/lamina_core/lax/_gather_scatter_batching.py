"""Batching rules of `gather` and the scatters: the mapped axis becomes part of the
dimension numbers, so the batched operation is still one gather or scatter.

Operand mapped only: the mapped axis (moved to the front) is a full-size window dimension.
Indices mapped (with or without the operand): the mapped axes (at the front) pair up as
XLA's batching dimensions, an unmapped operand is first broadcast for a scatter (it is
written to). The results have the mapped axis first. The dimension numbers are built as
JAX's `_gather_batching_rule` and `_scatter_batching_rule` build them, NumPy integers
included, so batched jaxprs print as JAX's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core.interpreters import AxisData, BatchDim, BatchRule, batching_rules
from lamina_core.ir import Primitive
from lamina_core.lax._batching_common import bdim_at_front, moveaxis, shape_of
from lamina_core.lax._gather_scatter import (
    SCATTERS,
    GatherDimensionNumbers,
    ScatterDimensionNumbers,
    gather,
    gather_p,
)


def _after_front(dims: Sequence[int]) -> tuple[Any, ...]:
    """`dims` renumbered for one new leading axis (NumPy integers, as JAX's `np.add`)."""
    return tuple(np.add(1, dims))


@batching_rules.register(gather_p)
def _gather_batch(
    axis_data: AxisData,
    vals: Sequence[Any],
    dims: Sequence[BatchDim],
    *,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Sequence[int],
    unique_indices: bool,
    indices_are_sorted: bool,
    mode: Any,
    fill_value: Any,
) -> tuple[Any, int]:
    (operand, indices), (operand_bdim, indices_bdim) = vals, dims
    dn = dimension_numbers
    if indices_bdim is None:
        assert operand_bdim is not None
        # Every example reads the same slices: take them across the whole mapped axis.
        operand = moveaxis(operand, operand_bdim, 0)
        numbers = GatherDimensionNumbers(
            offset_dims=(0, *_after_front(dn.offset_dims)),
            collapsed_slice_dims=_after_front(dn.collapsed_slice_dims),
            start_index_map=_after_front(dn.start_index_map),
            operand_batching_dims=_after_front(dn.operand_batching_dims),
            start_indices_batching_dims=dn.start_indices_batching_dims,
        )
        out = gather(
            operand,
            indices,
            numbers,
            (shape_of(operand)[0], *slice_sizes),
            unique_indices=unique_indices,
            indices_are_sorted=indices_are_sorted,
            mode=mode,
            fill_value=fill_value,
        )
        return out, 0
    if operand_bdim is None:
        indices = moveaxis(indices, indices_bdim, 0)
        # One more leading batch of indices into the same operand.
        numbers = GatherDimensionNumbers(
            offset_dims=tuple(1 + d for d in dn.offset_dims),
            collapsed_slice_dims=dn.collapsed_slice_dims,
            start_index_map=dn.start_index_map,
            operand_batching_dims=dn.operand_batching_dims,
            start_indices_batching_dims=_after_front(dn.start_indices_batching_dims),
        )
        # Indices of different examples may repeat or interleave.
        out = gather(
            operand,
            indices,
            numbers,
            slice_sizes,
            unique_indices=False,
            indices_are_sorted=False,
            mode=mode,
            fill_value=fill_value,
        )
        return out, 0
    # Example i reads operand i: the mapped axes are paired batching dimensions.
    operand = moveaxis(operand, operand_bdim, 0)
    indices = moveaxis(indices, indices_bdim, 0)
    numbers = GatherDimensionNumbers(
        offset_dims=_after_front(dn.offset_dims),
        collapsed_slice_dims=_after_front(dn.collapsed_slice_dims),
        start_index_map=_after_front(dn.start_index_map),
        operand_batching_dims=(0, *_after_front(dn.operand_batching_dims)),
        start_indices_batching_dims=(0, *_after_front(dn.start_indices_batching_dims)),
    )
    # A batching dimension's slice size is 1, or 0 when the axis is empty.
    batch_slice = 0 if shape_of(operand)[0] == 0 else 1
    out = gather(
        operand,
        indices,
        numbers,
        (batch_slice, *slice_sizes),
        unique_indices=unique_indices,
        indices_are_sorted=indices_are_sorted,
        mode=mode,
        fill_value=fill_value,
    )
    return out, 0


def _scatter_rule(prim: Primitive) -> BatchRule:
    """The batching rule of the scatter `prim` (all scatters batch alike)."""

    def rule(
        axis_data: AxisData,
        vals: Sequence[Any],
        dims: Sequence[BatchDim],
        *,
        dimension_numbers: ScatterDimensionNumbers,
        **params: Any,
    ) -> tuple[Any, int]:
        (operand, indices, updates), (operand_bdim, indices_bdim, updates_bdim) = vals, dims
        dn = dimension_numbers
        size = next(shape_of(x)[d] for x, d in zip(vals, dims, strict=True) if d is not None)
        # Whatever is mapped, each example writes into its own copy of the operand, so an
        # unmapped operand is broadcast (and unmapped updates with it).
        operand = bdim_at_front(operand, operand_bdim, size)
        updates = bdim_at_front(updates, updates_bdim, size)
        if indices_bdim is None:
            # Every example writes the same places: the mapped axis is a full window axis.
            numbers = ScatterDimensionNumbers(
                update_window_dims=(0, *_after_front(dn.update_window_dims)),
                inserted_window_dims=_after_front(dn.inserted_window_dims),
                scatter_dims_to_operand_dims=_after_front(dn.scatter_dims_to_operand_dims),
                operand_batching_dims=_after_front(dn.operand_batching_dims),
                scatter_indices_batching_dims=dn.scatter_indices_batching_dims,
            )
        else:
            # Example i writes operand i: the mapped axes are paired batching dimensions.
            indices = bdim_at_front(indices, indices_bdim, size)
            numbers = ScatterDimensionNumbers(
                update_window_dims=_after_front(dn.update_window_dims),
                inserted_window_dims=_after_front(dn.inserted_window_dims),
                scatter_dims_to_operand_dims=_after_front(dn.scatter_dims_to_operand_dims),
                operand_batching_dims=(0, *_after_front(dn.operand_batching_dims)),
                scatter_indices_batching_dims=(
                    0,
                    *_after_front(dn.scatter_indices_batching_dims),
                ),
            )
        out = prim.bind(operand, indices, updates, dimension_numbers=numbers, **params)
        return out, 0

    return rule


for _prim in SCATTERS:
    batching_rules.set(_prim, _scatter_rule(_prim))
