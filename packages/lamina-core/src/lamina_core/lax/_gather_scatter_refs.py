"""NumPy references for gather and the scatters, with XLA's semantics for the index modes.

Both are written as one NumPy fancy-indexing step: from the dimension numbers we build, for
every element of the result (gather) or of the updates (scatter), its coordinate in the
operand. Start indices are clamped so that the whole window fits (XLA's gather, and the
`CLIP` mode of both); a gather in fill mode replaces windows that would not fit by the fill
value, and a scatter drops them. This module knows dimension numbers only as plain tuples, so
it does not import the module that defines them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

Combine = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""A scalar update computation, `combine(old, update) -> new`, over NumPy scalars."""


def _window_dims(rank: int, *excluded: Sequence[int]) -> list[int]:
    dropped = {d for dims in excluded for d in dims}
    return [d for d in range(rank) if d not in dropped]


def gather(
    operand: np.ndarray,
    indices: np.ndarray,
    *,
    offset_dims: Sequence[int],
    collapsed_slice_dims: Sequence[int],
    start_index_map: Sequence[int],
    operand_batching_dims: Sequence[int],
    start_indices_batching_dims: Sequence[int],
    slice_sizes: Sequence[int],
    out_shape: tuple[int, ...],
    fill_value: Any,
) -> np.ndarray:
    """XLA's gather; with a `fill_value`, out-of-bounds windows are filled instead of clamped."""
    operand = np.asarray(operand)
    if 0 in out_shape:
        return np.zeros(out_shape, operand.dtype)
    starts = np.asarray(indices).astype(np.int64)
    batch_out_dims = [d for d in range(len(out_shape)) if d not in offset_dims]
    grid = np.indices(out_shape, sparse=True)
    window = _window_dims(operand.ndim, collapsed_slice_dims, operand_batching_dims)
    in_bounds = np.ones(starts.shape[:-1], bool)

    def at_batch(a: np.ndarray) -> np.ndarray:
        # An array over the batch dimensions, laid out over the output's dimensions.
        return np.expand_dims(a, tuple(offset_dims)) if offset_dims else a

    coords = []
    for d in range(operand.ndim):
        coord: Any = 0
        if d in start_index_map:
            start = starts[..., list(start_index_map).index(d)]
            high = operand.shape[d] - slice_sizes[d]
            in_bounds &= (start >= 0) & (start <= high)
            coord = at_batch(np.clip(start, 0, max(high, 0)))
        elif d in operand_batching_dims:
            position = list(operand_batching_dims).index(d)
            coord = grid[batch_out_dims[start_indices_batching_dims[position]]]
        if d in window:
            coord = coord + grid[offset_dims[window.index(d)]]
        coords.append(np.broadcast_to(coord, out_shape))
    result: np.ndarray = operand[tuple(coords)]
    if fill_value is None:
        return result
    fill = np.asarray(fill_value).astype(operand.dtype)
    return np.where(np.broadcast_to(at_batch(in_bounds), out_shape), result, fill)


def scatter(
    operand: np.ndarray,
    indices: np.ndarray,
    updates: np.ndarray,
    *,
    update_window_dims: Sequence[int],
    inserted_window_dims: Sequence[int],
    scatter_dims_to_operand_dims: Sequence[int],
    operand_batching_dims: Sequence[int],
    scatter_indices_batching_dims: Sequence[int],
    clip: bool,
    accumulate: np.ufunc | None,
    combine: Combine | None,
) -> np.ndarray:
    """XLA's scatter: windows that do not fit are dropped (or, with `clip`, moved inside).

    Updates combine with the operand through `accumulate` (a ufunc applied with `.at`, so
    repeated indices accumulate), element by element through `combine`, or, with neither,
    replace it.
    """
    out = np.array(operand, copy=True)
    updates = np.asarray(updates)
    if updates.size == 0:
        return out
    starts = np.asarray(indices).astype(np.int64)
    grid = np.indices(updates.shape, sparse=True)
    scatter_update_dims = [d for d in range(updates.ndim) if d not in update_window_dims]
    window = _window_dims(out.ndim, inserted_window_dims, operand_batching_dims)
    valid = np.ones(starts.shape[:-1], bool)

    def at_scatter(a: np.ndarray) -> np.ndarray:
        return np.expand_dims(a, tuple(update_window_dims)) if update_window_dims else a

    coords = []
    for d in range(out.ndim):
        size = updates.shape[update_window_dims[window.index(d)]] if d in window else 1
        coord: Any = 0
        if d in scatter_dims_to_operand_dims:
            start = starts[..., list(scatter_dims_to_operand_dims).index(d)]
            high = out.shape[d] - size
            if clip:
                start = np.clip(start, 0, max(high, 0))
            valid &= (start >= 0) & (start <= high)
            coord = at_scatter(start)
        elif d in operand_batching_dims:
            position = list(operand_batching_dims).index(d)
            coord = grid[scatter_update_dims[scatter_indices_batching_dims[position]]]
        if d in window:
            coord = coord + grid[update_window_dims[window.index(d)]]
        coords.append(np.broadcast_to(coord, updates.shape))
    keep = np.broadcast_to(at_scatter(valid), updates.shape)
    target: tuple[Any, ...] = tuple(c[keep] for c in coords)
    values = updates[keep]
    if accumulate is not None:
        accumulate.at(out, target, values)
    elif combine is None:
        out[target] = values
    else:
        # In order, one element at a time: a repeated index sees the previous update's result.
        for where, value in zip(zip(*target, strict=True), values, strict=True):
            out[where] = combine(out[where], value)
    return out
