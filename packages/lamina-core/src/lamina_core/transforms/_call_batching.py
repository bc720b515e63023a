"""Batching of the `jit` call primitive: vmap of a jitted function stays one `jit` equation.

The callee is batched with the operands' mapped axes where they are; its outputs keep the
mapped axes its rules produced (unmapped outputs stay unmapped), as JAX's `batch_jaxpr2`.
Batched callees are cached per callee object, so a function called twice prints once.
`batch_jaxpr_axes` and `batch_jaxpr_front` batch a jaxpr with its outputs' mapped axes
imposed, for the control-flow rules (JAX's `batch_jaxpr_axes` and `batch_jaxpr`).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from lamina_core.interpreters import AxisData, BatchDim, batch_flat, batching_rules, trace_to_jaxpr
from lamina_core.ir import ClosedJaxpr
from lamina_core.trace import eval_jaxpr
from lamina_core.transforms._call import UNSPECIFIED, closed_call_p, jit_p

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
    # Shardings given for the unbatched ranks do not fit the batched values: dropped.
    unspecified = {
        "in_shardings": (UNSPECIFIED,) * len(vals),
        "out_shardings": (UNSPECIFIED,) * len(jaxpr.out_avals),
    }
    outs = jit_p.bind(*vals, **dict(params, jaxpr=jaxpr, **unspecified))
    return outs, list(out_dims)


batching_rules.set(jit_p, _jit_batch)


def _closed_call_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], *, call_jaxpr: ClosedJaxpr
) -> tuple[list[Any], list[BatchDim]]:
    jaxpr, out_dims = batch_jaxpr(call_jaxpr, axis_data, tuple(dims))
    return closed_call_p.bind(*vals, call_jaxpr=jaxpr), list(out_dims)


batching_rules.set(closed_call_p, _closed_call_batch)


_axes_cache: weakref.WeakKeyDictionary[ClosedJaxpr, dict[Any, ClosedJaxpr]] = (
    weakref.WeakKeyDictionary()
)


def batch_jaxpr_axes(
    closed: ClosedJaxpr,
    axis_data: AxisData,
    in_dims: tuple[BatchDim, ...],
    out_dims: tuple[BatchDim, ...],
) -> ClosedJaxpr:
    """`closed` over operands mapped at `in_dims`, its outputs mapped at `out_dims` (an
    unmapped output asked to be mapped is broadcast), JAX's `batch_jaxpr_axes`."""
    entries = _axes_cache.setdefault(closed, {})
    key = (axis_data, in_dims, out_dims)
    found = entries.get(key)
    if found is not None:
        return found

    def fun(*args: Any) -> list[Any]:
        outs, _ = batch_flat(
            lambda *xs: eval_jaxpr(closed, (), *xs), axis_data, args, in_dims, list(out_dims)
        )
        return outs

    in_avals = [
        a if d is None else a.inc_rank(axis_data.size, d)
        for a, d in zip(closed.in_avals, in_dims, strict=True)
    ]
    batched = entries[key] = trace_to_jaxpr(fun, in_avals, closed.jaxpr.debug_info)
    return batched


def batch_jaxpr_front(
    closed: ClosedJaxpr,
    axis_data: AxisData,
    in_batched: Sequence[bool],
    instantiate: Sequence[bool],
) -> tuple[ClosedJaxpr, list[bool]]:
    """JAX's `batch_jaxpr`: mapped operands and outputs at axis 0; outputs flagged in
    `instantiate` are mapped even if they do not depend on a mapped operand."""
    in_dims = tuple(0 if b else None for b in in_batched)
    _, natural = batch_jaxpr(closed, axis_data, in_dims)
    out_batched = [d is not None or inst for d, inst in zip(natural, instantiate, strict=True)]
    out_dims = tuple(0 if b else None for b in out_batched)
    return batch_jaxpr_axes(closed, axis_data, in_dims, out_dims), out_batched


__all__ = ["batch_jaxpr", "batch_jaxpr_axes", "batch_jaxpr_front"]
