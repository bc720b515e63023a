"""Batching of the `jit` call primitive: vmap of a jitted function stays one `jit` equation.

The callee is batched with the operands' mapped axes where they are; its outputs keep the
mapped axes its rules produced (unmapped outputs stay unmapped), as JAX's `batch_jaxpr2`.
Batched callees are cached per callee object, so a function called twice prints once.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from lamina_core.call import jit_p
from lamina_core.evaluate import eval_jaxpr
from lamina_core.interpreters.batching import AxisData, BatchDim, batch_flat, batching_rules
from lamina_core.interpreters.staging import trace_to_jaxpr
from lamina_core.jaxpr import ClosedJaxpr

_batch_cache: weakref.WeakKeyDictionary[ClosedJaxpr, dict[Any, Any]] = weakref.WeakKeyDictionary()


def batch_jaxpr(
    closed: ClosedJaxpr, axis_data: AxisData, in_dims: tuple[BatchDim, ...]
) -> tuple[ClosedJaxpr, list[BatchDim]]:
    """`closed` over batched operands (mapped at `in_dims`), and where its outputs are mapped."""
    entries = _batch_cache.setdefault(closed, {})
    key = (axis_data, in_dims)
    found = entries.get(key)
    if found is not None:
        return found  # type: ignore[no-any-return]
    out_dims: list[BatchDim] = []

    def fun(*args: Any) -> list[Any]:
        outs, dims = batch_flat(lambda *xs: eval_jaxpr(closed, (), *xs), axis_data, args, in_dims)
        out_dims.extend(dims)
        return outs

    in_avals = [
        a if d is None else a.inc_rank(axis_data.size, d)
        for a, d in zip(closed.in_avals, in_dims, strict=True)
    ]
    batched = trace_to_jaxpr(fun, in_avals, closed.jaxpr.debug_info)
    entries[key] = batched, out_dims
    return batched, out_dims


def _jit_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any
) -> tuple[list[Any], list[BatchDim]]:
    jaxpr, out_dims = batch_jaxpr(params["jaxpr"], axis_data, tuple(dims))
    outs = jit_p.bind(*vals, **dict(params, jaxpr=jaxpr))
    return outs, list(out_dims)


batching_rules.set(jit_p, _jit_batch)

__all__ = ["batch_jaxpr"]
