"""Batching rules of the joining primitives: concatenate, stack, unstack, split and pad.

As in JAX, `concatenate` moves every mapped axis to the front (unmapped operands are
broadcast there), and so does `stack` unless all operands are mapped at the same axis;
`unstack`, `split` and `pad` keep the mapped axis where it is (a mapped padding value makes
`pad` a `select` between the zero-padded operand and the broadcast value).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core.interpreters import AxisData, BatchDim, batching_rules
from lamina_core.lax._ad_common import full_like
from lamina_core.lax._batching_common import moveaxis, shape_of
from lamina_core.lax._joining import (
    concatenate,
    concatenate_p,
    pad,
    pad_p,
    split,
    split_p,
    stack_p,
    unstack,
    unstack_p,
)
from lamina_core.lax._selection import select
from lamina_core.lax._structural import broadcast, broadcast_in_dim


def _mapped_size(vals: Sequence[Any], dims: Sequence[BatchDim]) -> int:
    return next(shape_of(x)[d] for x, d in zip(vals, dims, strict=True) if d is not None)


def _all_at_front(vals: Sequence[Any], dims: Sequence[BatchDim]) -> list[Any]:
    """Every operand with its mapped axis first; unmapped ones broadcast there (with
    `lax.broadcast`, whose dimensions are Python ints, unlike vmap's own broadcast)."""
    size = _mapped_size(vals, dims)
    return [
        broadcast(x, (size,)) if d is None else moveaxis(x, d, 0)
        for x, d in zip(vals, dims, strict=True)
    ]


def _concatenate_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], *, dimension: int
) -> tuple[Any, BatchDim]:
    return concatenate(_all_at_front(vals, dims), dimension + 1), 0


def _stack_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], *, axis: int
) -> tuple[Any, BatchDim]:
    bdim = dims[0]
    if bdim is not None and all(d == bdim for d in dims):
        # The new axis goes in front of or behind the shared mapped axis.
        if axis <= bdim:
            return stack_p.bind(*vals, axis=axis), bdim + 1
        return stack_p.bind(*vals, axis=axis + 1), bdim
    return stack_p.bind(*_all_at_front(vals, dims), axis=axis + 1), 0


def _unstack_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], *, axis: int
) -> tuple[Any, Any]:
    (x,), (bdim,) = vals, dims
    if bdim is None:
        outs = unstack(x, axis)
        return outs, [None] * len(outs)
    if axis < bdim:
        outs = unstack_p.bind(x, axis=axis)
        return outs, [bdim - 1] * len(outs)
    outs = unstack_p.bind(x, axis=axis + 1)
    return outs, [bdim] * len(outs)


def _split_batch(
    axis_data: AxisData,
    vals: Sequence[Any],
    dims: Sequence[BatchDim],
    *,
    sizes: Sequence[int],
    axis: int,
) -> tuple[Any, Any]:
    (x,), (bdim,) = vals, dims
    assert bdim is not None
    outs = split(x, sizes, axis + 1 if axis >= bdim else axis)
    return outs, [bdim] * len(sizes)


def _pad_batch(
    axis_data: AxisData,
    vals: Sequence[Any],
    dims: Sequence[BatchDim],
    *,
    padding_config: Sequence[tuple[int, int, int]],
) -> tuple[Any, BatchDim]:
    (x, value), (bdim, value_bdim) = vals, dims
    if bdim is None:
        assert value_bdim is not None
        x, bdim = broadcast(x, (shape_of(value)[value_bdim],)), 0
    config = list(padding_config)
    config.insert(bdim, (0, 0, 0))
    if value_bdim is None:
        return pad(x, value, config), bdim
    # A padding value per example: pad with zeros, then select the value where a padded
    # mask of trues says the padding went.
    assert value_bdim == 0
    padded = pad(x, full_like(x, 0, shape=()), config)
    mask = pad(full_like(x, True, dtype=np.bool_), False, config)
    values = broadcast_in_dim(value, shape_of(padded), (bdim,))
    return select(mask, padded, values), bdim


batching_rules.set(concatenate_p, _concatenate_batch)
batching_rules.set(stack_p, _stack_batch)
batching_rules.set(unstack_p, _unstack_batch)
batching_rules.set(split_p, _split_batch)
batching_rules.set(pad_p, _pad_batch)
