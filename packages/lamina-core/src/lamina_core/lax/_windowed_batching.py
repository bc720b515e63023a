"""Batching rules of the generic and windowed reductions, as JAX's.

The mapped axis becomes one more window dimension of size 1 (stride 1, no padding, no
dilation): the monoid window reductions keep it where it is; the generic `reduce_window`,
`reduce` and the pooling-derivative primitives move it to the front first. Batched init
values are not supported (JAX's rules raise too).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lamina_core.interpreters import AxisData, BatchDim, BatchRule, batching_rules
from lamina_core.lax import _reduce_generic as rg
from lamina_core.lax import _select_and_scatter as ss
from lamina_core.lax import _windowed as w
from lamina_core.lax._batching_common import bdim_at_front, shape_of

Window = dict[str, Any]


def _unit_window_at(index: int, params: Window) -> Window:
    """`params` (a windowed reduction's) with a trivial window dimension at `index`."""
    trivial = {
        "window_dimensions": 1,
        "window_strides": 1,
        "padding": (0, 0),
        "base_dilation": 1,
        "window_dilation": 1,
    }
    out = dict(params)
    for name, unit in trivial.items():
        if name in params:
            values = tuple(params[name])
            out[name] = (*values[:index], unit, *values[index:])
    return out


def _size(vals: Sequence[Any], dims: Sequence[BatchDim]) -> int:
    return next(shape_of(x)[d] for x, d in zip(vals, dims, strict=True) if d is not None)


@batching_rules.register(rg.reduce_p)
def _reduce_batch(
    axis_data: AxisData,
    vals: Sequence[Any],
    dims: Sequence[BatchDim],
    *,
    computation: Any,
    jaxpr: Any,
    dimensions: Sequence[int],
) -> tuple[list[Any], list[BatchDim]]:
    operands, inits = rg.split_operands(vals)
    operand_dims, init_dims = rg.split_operands(dims)
    if any(d is not None for d in init_dims):
        raise NotImplementedError
    size = _size(vals, dims)
    moved = [bdim_at_front(x, d, size) for x, d in zip(operands, operand_dims, strict=True)]
    outs = rg.reduce_p.bind(
        *moved,
        *inits,
        computation=computation,
        dimensions=tuple(d + 1 for d in dimensions),
        jaxpr=jaxpr,
    )
    return list(outs), [0] * len(operands)


@batching_rules.register(w.reduce_window_p)
def _reduce_window_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any
) -> tuple[list[Any], list[BatchDim]]:
    operands, inits = rg.split_operands(vals)
    operand_dims, init_dims = rg.split_operands(dims)
    if any(d is not None for d in init_dims):
        raise NotImplementedError("reduce_window batching is not implemented for initial values")
    size = _size(vals, dims)
    moved = [bdim_at_front(x, d, size) for x, d in zip(operands, operand_dims, strict=True)]
    outs = w.reduce_window_p.bind(*moved, *inits, **_unit_window_at(0, params))
    return list(outs), [0] * len(operands)


def _monoid_batch(reduce: Any) -> BatchRule:
    def rule(
        axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any
    ) -> tuple[Any, BatchDim]:
        (operand,), (bdim,) = vals, dims
        if bdim is not None:
            params = _unit_window_at(bdim, params)
        return reduce(operand, **params), bdim

    return rule


batching_rules.set(w.reduce_window_sum_p, _monoid_batch(w._reduce_window_sum))
batching_rules.set(w.reduce_window_max_p, _monoid_batch(w._reduce_window_max))
batching_rules.set(w.reduce_window_min_p, _monoid_batch(w._reduce_window_min))


@batching_rules.register(ss.select_and_scatter_add_p)
def _select_and_scatter_add_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any
) -> tuple[Any, BatchDim]:
    size = _size(vals, dims)
    source, operand = (bdim_at_front(x, d, size) for x, d in zip(vals, dims, strict=True))
    return ss._select_and_scatter_add(source, operand, **_unit_window_at(0, params)), 0


@batching_rules.register(ss.select_and_gather_add_p)
def _select_and_gather_add_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any
) -> tuple[Any, BatchDim]:
    size = _size(vals, dims)
    tangents, operand = (bdim_at_front(x, d, size) for x, d in zip(vals, dims, strict=True))
    return ss._select_and_gather_add(tangents, operand, **_unit_window_at(0, params)), 0
