"""Lowering of selection, slicing, joining and splitting primitives.

`select_n` with a boolean `which` is one `stablehlo.select`; with an integer `which` it is a
balanced tree of selects on `which < k`, as JAX lowers it. `concatenate` of many operands is a
tree of at most 16-way concatenations (XLA compiles wide ones slowly); `stack` broadcasts each
operand to size 1 along the new axis and concatenates; `split` and `unstack` are slices.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir

from lamina_core import lax
from lamina_mlir import _hlo
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._mlir_context import ContextCaches, IrValue
from lamina_mlir._rules_util import (
    array_aval,
    full_like,
    out_aval,
    out_type,
    register,
    register_nary,
)

register_nary(lax.clamp_p, "stablehlo.clamp")


@register(lax.select_n_p)
def _select_n_lowering(ctx: LoweringRuleContext, which: IrValue, *cases: IrValue) -> list[IrValue]:
    which_aval = array_aval(ctx.avals_in[0])
    if which_aval.dtype == np.dtype(bool):
        if len(cases) == 1:
            return [cases[0]]
        return [_hlo.select(which, cases[1], cases[0])]
    kind = "SIGNED" if _hlo.kind(which_aval.dtype) == "i" else "UNSIGNED"

    def pick(offset: int, options: Sequence[IrValue]) -> IrValue:
        if len(options) == 1:
            return options[0]
        mid = len(options) // 2
        bound = full_like(ctx, offset + mid, which_aval)
        below = _hlo.compare(ctx.caches, which, bound, "LT", kind)
        return _hlo.select(below, pick(offset, options[:mid]), pick(offset + mid, options[mid:]))

    return [pick(0, cases)]


@register(lax.bitcast_convert_type_p)
def _bitcast_convert_type_lowering(
    ctx: LoweringRuleContext, x: IrValue, *, new_dtype: np.dtype
) -> list[IrValue]:
    return [_hlo.emit1("stablehlo.bitcast_convert", out_type(ctx), x)]


@register(lax.reduce_precision_p)
def _reduce_precision_lowering(
    ctx: LoweringRuleContext, x: IrValue, *, exponent_bits: int, mantissa_bits: int
) -> list[IrValue]:
    attrs = {
        "exponent_bits": _hlo.i32_attr(ctx.caches, exponent_bits),
        "mantissa_bits": _hlo.i32_attr(ctx.caches, mantissa_bits),
    }
    return [_hlo.emit1("stablehlo.reduce_precision", out_type(ctx), x, attributes=attrs)]


@register(lax.slice_p)
def _slice_lowering(
    ctx: LoweringRuleContext,
    x: IrValue,
    *,
    start_indices: Sequence[int],
    limit_indices: Sequence[int],
    strides: Sequence[int] | None,
) -> list[IrValue]:
    aval = out_aval(ctx)
    steps = strides if strides is not None else (1,) * len(start_indices)
    return [
        _hlo.slice_op(ctx.caches, x, aval.shape, aval.dtype, start_indices, limit_indices, steps)
    ]


@register(lax.dynamic_slice_p)
def _dynamic_slice_lowering(
    ctx: LoweringRuleContext, x: IrValue, *starts: IrValue, slice_sizes: Sequence[int]
) -> list[IrValue]:
    attrs = {"slice_sizes": _hlo.dense_i64_array(ctx.caches, out_aval(ctx).shape)}
    return [_hlo.emit1("stablehlo.dynamic_slice", out_type(ctx), x, *starts, attributes=attrs)]


@register(lax.dynamic_update_slice_p)
def _dynamic_update_slice_lowering(
    ctx: LoweringRuleContext, x: IrValue, update: IrValue, *starts: IrValue
) -> list[IrValue]:
    return [_hlo.emit1("stablehlo.dynamic_update_slice", out_type(ctx), x, update, *starts)]


def _concatenate_tree(caches: ContextCaches, xs: Sequence[IrValue], dimension: int) -> IrValue:
    attrs = {"dimension": _hlo.i64_attr(caches, dimension)}
    current = list(xs)
    while len(current) > 1:
        groups = [current[i : i + 16] for i in range(0, len(current), 16)]
        current = [_concat(group, dimension, attrs) for group in groups]
    return current[0]


def _concat(xs: Sequence[IrValue], dimension: int, attrs: dict[str, ir.Attribute]) -> IrValue:
    first = ir.RankedTensorType(xs[0].type)
    shape = list(first.shape)
    sizes = [ir.RankedTensorType(x.type).shape[dimension] for x in xs]
    dynamic = ir.ShapedType.get_dynamic_size()  # a symbolic size (shape polymorphism)
    shape[dimension] = dynamic if dynamic in sizes else sum(sizes)
    result = ir.RankedTensorType.get(shape, first.element_type)
    return _hlo.emit1("stablehlo.concatenate", result, *xs, attributes=attrs)


@register(lax.concatenate_p)
def _concatenate_lowering(ctx: LoweringRuleContext, *xs: IrValue, dimension: int) -> list[IrValue]:
    return [_concatenate_tree(ctx.caches, xs, dimension)]


@register(lax.stack_p)
def _stack_lowering(ctx: LoweringRuleContext, *xs: IrValue, axis: int) -> list[IrValue]:
    aval = array_aval(ctx.avals_in[0])
    shape = list(aval.shape)
    shape.insert(axis, 1)
    dims = [i for i in range(aval.ndim + 1) if i != axis]
    expanded = [
        _hlo.broadcast_in_dim(ctx.caches, x, tuple(shape), array_aval(a).dtype, dims)
        for x, a in zip(xs, ctx.avals_in, strict=True)
    ]
    return [_concatenate_tree(ctx.caches, expanded, axis)]


def _slices_along(
    ctx: LoweringRuleContext, x: IrValue, axis: int, sizes: Sequence[int], squeeze: bool
) -> list[IrValue]:
    aval = array_aval(ctx.avals_in[0])
    start = [0] * aval.ndim
    limit = list(aval.shape)
    strides = [1] * aval.ndim
    outs = []
    for size, result in zip(sizes, ctx.avals_out, strict=True):
        limit[axis] = start[axis] + size
        shape = list(aval.shape)
        shape[axis] = size
        piece = _hlo.slice_op(ctx.caches, x, tuple(shape), aval.dtype, start, limit, strides)
        if squeeze:
            piece = _hlo.reshape(ctx.caches, piece, array_aval(result).shape, aval.dtype)
        outs.append(piece)
        start[axis] = limit[axis]
    return outs


@register(lax.split_p)
def _split_lowering(
    ctx: LoweringRuleContext, x: IrValue, *, sizes: Sequence[int], axis: int
) -> list[IrValue]:
    return _slices_along(ctx, x, axis, [int(s) for s in sizes], squeeze=False)


@register(lax.unstack_p)
def _unstack_lowering(ctx: LoweringRuleContext, x: IrValue, *, axis: int) -> list[IrValue]:
    return _slices_along(ctx, x, axis, [1] * len(ctx.avals_out), squeeze=True)


@register(lax.pad_p)
def _pad_lowering(
    ctx: LoweringRuleContext,
    x: IrValue,
    padding_value: IrValue,
    *,
    padding_config: Sequence[tuple[int, int, int]],
) -> list[IrValue]:
    caches = ctx.caches
    low, high, interior = zip(*padding_config, strict=True) if padding_config else ((), (), ())
    attrs: dict[str, Any] = {
        "edge_padding_low": _hlo.dense_i64_array(caches, low),
        "edge_padding_high": _hlo.dense_i64_array(caches, high),
        "interior_padding": _hlo.dense_i64_array(caches, interior),
    }
    return [_hlo.emit1("stablehlo.pad", out_type(ctx), x, padding_value, attributes=attrs)]
