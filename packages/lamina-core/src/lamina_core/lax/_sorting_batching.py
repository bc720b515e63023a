"""Batching rules of `sort` and `top_k`: the mapped axis is one more axis the sort runs
alongside, and the sorted dimension is renumbered around it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core.interpreters import AxisData, BatchDim, batching_rules
from lamina_core.lax._batching_common import moveaxis, ndim_of, shape_of
from lamina_core.lax._sorting import sort_p, top_k, top_k_p
from lamina_core.lax._structural import broadcast_in_dim


@batching_rules.register(sort_p)
def _sort_batch(
    axis_data: AxisData,
    vals: Sequence[Any],
    dims: Sequence[BatchDim],
    *,
    dimension: int,
    is_stable: bool,
    num_keys: int,
) -> tuple[list[Any], list[int]]:
    # Operands sort together, so all take the mapped axis where the first mapped one has it;
    # unmapped ones are broadcast to its full shape.
    prototype, bdim = next((x, d) for x, d in zip(vals, dims, strict=True) if d is not None)
    shape = shape_of(prototype)
    kept = [int(d) for d in np.delete(np.arange(ndim_of(prototype)), bdim)]
    operands = [
        broadcast_in_dim(x, shape, kept) if d is None else moveaxis(x, d, bdim)
        for x, d in zip(vals, dims, strict=True)
    ]
    new_dimension = dimension + (bdim <= dimension)
    out = sort_p.bind(*operands, dimension=new_dimension, is_stable=is_stable, num_keys=num_keys)
    return list(out), [bdim] * len(operands)


@batching_rules.register(top_k_p)
def _top_k_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], *, k: int, axis: int
) -> tuple[list[Any], list[int]]:
    (operand,), (bdim,) = vals, dims
    assert bdim is not None
    values, indices = top_k(operand, k, axis=axis + (bdim <= axis))
    return [values, indices], [bdim, bdim]
