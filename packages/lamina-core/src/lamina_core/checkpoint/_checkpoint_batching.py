"""Batching of `remat2` (checkpoint) and `name` (checkpoint_name).

vmap of a checkpointed function stays one `remat2` equation: its jaxpr is batched with the
operands' mapped axes where they are, and each mapped output is moved to the front (JAX's
`remat_vmap`, with `zero_if_mapped` outputs); the other params are kept. Values the batched
jaxpr closes over become leading operands. `name` is elementwise: the mapped axis stays.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from lamina_core.checkpoint._checkpoint import bind_remat, cached, close_jaxpr, open_jaxpr, remat_p
from lamina_core.checkpoint._policies import name_p
from lamina_core.interpreters import (
    AxisData,
    BatchDim,
    batch_flat,
    batching_rules,
    match_axis,
    trace_to_jaxpr,
)
from lamina_core.ir import ClosedJaxpr, Jaxpr
from lamina_core.trace import eval_jaxpr

_batched_cache: weakref.WeakKeyDictionary[Any, dict[Any, Any]] = weakref.WeakKeyDictionary()


def _batch_front(
    closed: ClosedJaxpr, axis_data: AxisData, in_dims: tuple[BatchDim, ...]
) -> tuple[ClosedJaxpr, list[BatchDim]]:
    """`closed` over operands mapped at `in_dims`, its mapped outputs moved to axis 0."""
    out_dims: list[BatchDim] = []

    def fun(*args: Any) -> list[Any]:
        outs, dims = batch_flat(lambda *xs: eval_jaxpr(closed, (), *xs), axis_data, args, in_dims)
        placed = [v if d is None else match_axis(axis_data, d, 0, v) for v, d in zip(
            outs, dims, strict=True)]  # fmt: skip
        out_dims.extend(None if d is None else 0 for d in dims)
        return placed

    in_avals = [
        a if d is None else a.inc_rank(axis_data.size, d)
        for a, d in zip(closed.in_avals, in_dims, strict=True)
    ]
    return trace_to_jaxpr(fun, in_avals, closed.jaxpr.debug_info), out_dims


def _remat_batch(
    axis_data: AxisData,
    vals: Sequence[Any],
    dims: Sequence[BatchDim],
    *,
    jaxpr: Jaxpr,
    prevent_cse: Any,
    differentiated: bool,
    policy: Any,
) -> tuple[list[Any], list[BatchDim]]:
    in_dims = tuple(dims)
    batched, out_dims = cached(
        _batched_cache,
        jaxpr,
        (axis_data, in_dims),
        lambda: _batch_front(close_jaxpr(jaxpr), axis_data, in_dims),
    )
    consts = list(batched.consts)
    if isinstance(prevent_cse, tuple):
        prevent_cse = (False,) * len(consts) + prevent_cse
    outs = bind_remat([*consts, *vals], open_jaxpr(batched), prevent_cse, differentiated, policy)
    return outs, list(out_dims)


batching_rules.set(remat_p, _remat_batch)


def _name_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], *, name: Any
) -> tuple[Any, BatchDim]:
    return name_p.bind(vals[0], name=name), dims[0]


batching_rules.set(name_p, _name_batch)

__all__: list[str] = []
