"""Lowering of `gather` and the scatters to `stablehlo.gather` and `stablehlo.scatter`.

The dimension numbers carry over as they are, with the index vector in the last dimension of
the indices. Two modes need more than the one op, and are lowered, as JAX lowers them, by
tracing a small Lamina function and lowering its jaxpr in place: a fill-mode gather masks the
windows that do not fit (a promise-in-bounds gather, then a select against the fill value),
and a clip-mode scatter clamps its indices first. A scatter's update computation is its
`update_jaxpr` lowered into the op's region; plain `scatter` returns the update.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from lamina_core import lax
from lamina_core.interpreters import trace_to_jaxpr
from lamina_core.ir import Jaxpr
from lamina_mlir import _dynamic, _hlo
from lamina_mlir._constants import ir_constant
from lamina_mlir._context import NO_TOKENS, LoweringRuleContext
from lamina_mlir._ir_types import tensor_type
from lamina_mlir._lower import jaxpr_subcomp
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._rules_util import array_aval, full_like, out_aval, out_type, register

_MODE = lax.GatherScatterMode


def _index_dtype(shape: Sequence[int]) -> np.dtype:
    """int32, or int64 when a dimension does not fit in int32 (JAX's `int_dtype_for_shape`)."""
    big = any(d >= np.iinfo(np.int32).max for d in shape)
    return np.dtype(np.int64 if big else np.int32)


def _lower_traced(
    ctx: LoweringRuleContext, fun: Callable[..., Any], args: Sequence[IrValue]
) -> list[IrValue]:
    """Trace `fun` over the equation's input types and lower the jaxpr here, in place."""
    closed = trace_to_jaxpr(lambda *xs: [fun(*xs)], ctx.avals_in[: len(args)])
    outs, _ = jaxpr_subcomp(
        ctx.module_context,
        closed.jaxpr,
        ctx.name_stack,
        NO_TOKENS,
        [],
        *args,
        const_lowering=ctx.const_lowering,
    )
    return outs


# --- gather ---------------------------------------------------------------------------------


def _gather_op(
    ctx: LoweringRuleContext,
    operand: IrValue,
    indices: IrValue,
    dn: lax.GatherDimensionNumbers,
    slice_sizes: Sequence[int],
    indices_are_sorted: bool,
) -> IrValue:
    aval = out_aval(ctx)
    if 0 in aval.shape:
        return full_like(ctx, 0, aval)
    caches = ctx.caches
    dimension_numbers = hlo.GatherDimensionNumbers.get(
        offset_dims=list(dn.offset_dims),
        collapsed_slice_dims=list(dn.collapsed_slice_dims),
        operand_batching_dims=list(dn.operand_batching_dims),
        start_indices_batching_dims=list(dn.start_indices_batching_dims),
        start_index_map=list(dn.start_index_map),
        index_vector_dim=array_aval(ctx.avals_in[1]).ndim - 1,
    )
    attrs = {
        "dimension_numbers": dimension_numbers,
        "indices_are_sorted": _hlo.bool_attr(caches, indices_are_sorted),
    }
    if _dynamic.is_dynamic(slice_sizes):  # symbolic window sizes: JAX's dynamic gather
        sizes = _dynamic.shape_tensor(caches, slice_sizes)
        return _hlo.emit1(
            "stablehlo.dynamic_gather", out_type(ctx), operand, indices, sizes, attributes=attrs
        )
    attrs["slice_sizes"] = _hlo.dense_i64_array(caches, slice_sizes)
    return _hlo.emit1("stablehlo.gather", out_type(ctx), operand, indices, attributes=attrs)


def _gather_fill(
    operand: Any,
    indices: Any,
    *,
    dn: lax.GatherDimensionNumbers,
    slice_sizes: Sequence[int],
    indices_are_sorted: bool,
    fill_value: Any,
    out_shape: tuple[int, ...],
) -> Any:
    """A fill-mode gather as a promise-in-bounds one whose out-of-bounds windows are masked."""
    shape = operand.shape
    index_dtype = _index_dtype(shape)
    indices = lax.convert_element_type(indices, index_dtype)
    starts = list(dn.start_index_map)
    operand_dims = np.asarray(shape, np.int64).astype(index_dtype)
    sizes = np.asarray(slice_sizes, np.int64)
    upper_bound = operand_dims[starts] - sizes[starts].astype(index_dtype)
    batch = len(indices.shape) - 1
    mask = lax.bitwise_and(
        lax.ge(indices, index_dtype.type(0)),
        lax.le(indices, lax.expand_dims(upper_bound, tuple(range(batch)))),
    )
    mask = lax.reduce_and(mask, [batch])
    batch_dims_in_output = np.delete(np.arange(batch + len(dn.offset_dims)), dn.offset_dims)
    gathered = lax.gather(
        operand,
        indices,
        dn,
        slice_sizes,
        indices_are_sorted=indices_are_sorted,
        mode=_MODE.PROMISE_IN_BOUNDS,
    )
    in_bounds = lax.broadcast_in_dim(mask, out_shape, batch_dims_in_output.tolist())
    return lax.select(in_bounds, gathered, lax.full(out_shape, fill_value, operand.dtype))


@register(lax.gather_p)
def _gather_lowering(
    ctx: LoweringRuleContext,
    operand: IrValue,
    indices: IrValue,
    *,
    dimension_numbers: lax.GatherDimensionNumbers,
    slice_sizes: Sequence[int],
    unique_indices: bool,
    indices_are_sorted: bool,
    mode: lax.GatherScatterMode,
    fill_value: Any,
) -> list[IrValue]:
    if mode == _MODE.FILL_OR_DROP:

        def fill(x: Any, i: Any) -> Any:
            return _gather_fill(
                x,
                i,
                dn=dimension_numbers,
                slice_sizes=slice_sizes,
                indices_are_sorted=indices_are_sorted,
                fill_value=fill_value,
                out_shape=out_aval(ctx).shape,
            )

        return _lower_traced(ctx, fill, [operand, indices])
    if mode not in (_MODE.PROMISE_IN_BOUNDS, _MODE.CLIP):
        raise NotImplementedError(f"gather: mode {mode} has no lowering")
    # XLA's gather clamps start indices, which is the CLIP mode's meaning.
    op = _gather_op(ctx, operand, indices, dimension_numbers, slice_sizes, indices_are_sorted)
    return [op]


# --- scatter --------------------------------------------------------------------------------


def _clamp_scatter_indices(
    operand: Any, indices: Any, updates: Any, *, dn: lax.ScatterDimensionNumbers
) -> Any:
    """`indices` clamped so that every update window fits in the operand."""
    dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    window = iter(dn.update_window_dims)
    sizes = [1 if d in dropped else updates.shape[next(window)] for d in range(operand.ndim)]
    upper = np.asarray(
        [operand.shape[d] - sizes[d] for d in dn.scatter_dims_to_operand_dims], np.int64
    )
    limit = min(np.iinfo(upper.dtype).max, np.iinfo(indices.dtype).max)
    upper_bound = lax.min(upper, upper.dtype.type(limit))
    upper_bound = lax.convert_element_type(upper_bound, indices.dtype)
    upper_bound = lax.broadcast_in_dim(upper_bound, indices.shape, (len(indices.shape) - 1,))
    return lax.clamp(indices.dtype.type(0), indices, upper_bound)


def _update_region(
    ctx: LoweringRuleContext, op: ir.Operation, jaxpr: Jaxpr | None, consts: Sequence[Any]
) -> None:
    dtype = out_aval(ctx).dtype
    scalar = tensor_type(ctx.caches, (), dtype)
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        if jaxpr is None:
            _hlo.return_([block.arguments[1]])
            return
        if jaxpr.effects:
            raise NotImplementedError("Cannot lower effectful `scatter`.")
        const_values = [
            ir_constant(ctx.caches, c, v.aval, ctx.const_lowering)
            for c, v in zip(consts, jaxpr.constvars, strict=True)
        ]
        outs, _ = jaxpr_subcomp(
            ctx.module_context,
            jaxpr,
            ctx.name_stack,
            NO_TOKENS,
            const_values,
            block.arguments[0],
            block.arguments[1],
            const_lowering=ctx.const_lowering,
        )
        _hlo.return_(outs)


def _scatter_lowering(
    ctx: LoweringRuleContext,
    operand: IrValue,
    indices: IrValue,
    updates: IrValue,
    *,
    update_jaxpr: Jaxpr | None,
    update_consts: Sequence[Any],
    dimension_numbers: lax.ScatterDimensionNumbers,
    indices_are_sorted: bool,
    unique_indices: bool,
    mode: lax.GatherScatterMode,
) -> list[IrValue]:
    dn = dimension_numbers
    if mode == _MODE.CLIP:

        def clamp(x: Any, i: Any, u: Any) -> Any:
            return _clamp_scatter_indices(x, i, u, dn=dn)

        (indices,) = _lower_traced(ctx, clamp, [operand, indices, updates])
    elif mode == _MODE.ONE_HOT:
        raise NotImplementedError("scatter: mode ONE_HOT has no lowering")
    caches = ctx.caches
    indices_aval = array_aval(ctx.avals_in[1])
    dimension_numbers_attr = hlo.ScatterDimensionNumbers.get(
        update_window_dims=list(dn.update_window_dims),
        inserted_window_dims=list(dn.inserted_window_dims),
        input_batching_dims=list(dn.operand_batching_dims),
        scatter_indices_batching_dims=list(dn.scatter_indices_batching_dims),
        scattered_dims_to_operand_dims=list(dn.scatter_dims_to_operand_dims),
        index_vector_dim=indices_aval.ndim - 1,
    )
    attrs = {
        "scatter_dimension_numbers": dimension_numbers_attr,
        "indices_are_sorted": _hlo.bool_attr(caches, indices_are_sorted),
        "unique_indices": _hlo.bool_attr(caches, unique_indices),
    }
    op = _hlo.emit(
        "stablehlo.scatter", [out_type(ctx)], [operand, indices, updates], attrs, regions=1
    )
    _update_region(ctx, op, update_jaxpr, update_consts)
    return [op.result]


for _prim in (
    lax.scatter_p,
    lax.scatter_add_p,
    lax.scatter_sub_p,
    lax.scatter_mul_p,
    lax.scatter_min_p,
    lax.scatter_max_p,
):
    register(_prim)(_scatter_lowering)
