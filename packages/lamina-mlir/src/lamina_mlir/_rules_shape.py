"""Lowering of type conversion, broadcasting and the shape primitives.

`convert_element_type` to bool is `x != 0` (XLA's convert would truncate), and from complex to
real takes the real part first. `squeeze` is a reshape, `tile` a reshape-broadcast-reshape,
`reshape` with `dimensions` a transpose first, all as JAX lowers them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core import dtypes, lax
from lamina_core.lax import empty2_p
from lamina_mlir import _dynamic, _hlo
from lamina_mlir._constants import ir_constant
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._rules_util import array_aval, out_aval, out_type, register


@register(lax.convert_element_type_p)
def _convert_element_type_lowering(
    ctx: LoweringRuleContext, x: IrValue, *, new_dtype: np.dtype, **params: Any
) -> list[IrValue]:
    aval_in = array_aval(ctx.avals_in[0])
    dtype_in = aval_in.dtype
    dtype_out = out_aval(ctx).dtype
    if _hlo.kind(dtype_in) == "c" and _hlo.kind(dtype_out) != "c":
        x = _hlo.real_part(x)
        dtype_in = dtypes.finfo(dtype_in).dtype
    return [_hlo.convert_hlo(ctx.caches, x, aval_in.shape, dtype_in, dtype_out)]


@register(lax.broadcast_in_dim_p)
def _broadcast_in_dim_lowering(
    ctx: LoweringRuleContext, x: IrValue, *, broadcast_dimensions: Sequence[int], **params: Any
) -> list[IrValue]:
    aval = out_aval(ctx)
    return [_hlo.broadcast_in_dim(ctx.caches, x, aval.shape, aval.dtype, broadcast_dimensions)]


@register(lax.reshape_p)
def _reshape_lowering(
    ctx: LoweringRuleContext, x: IrValue, *, dimensions: Sequence[int] | None, **params: Any
) -> list[IrValue]:
    if dimensions is not None:
        x = _hlo.transpose(ctx.caches, x, dimensions)
    aval = out_aval(ctx)
    if _dynamic.is_dynamic(aval.shape):
        return [_dynamic.reshape(ctx.caches, x, aval.shape, aval.dtype)]
    return [_hlo.emit1("stablehlo.reshape", out_type(ctx), x)]


@register(lax.squeeze_p)
def _squeeze_lowering(ctx: LoweringRuleContext, x: IrValue, **params: Any) -> list[IrValue]:
    aval = out_aval(ctx)
    if _dynamic.is_dynamic(aval.shape):
        return [_dynamic.reshape(ctx.caches, x, aval.shape, aval.dtype)]
    return [_hlo.emit1("stablehlo.reshape", out_type(ctx), x)]


@register(lax.transpose_p)
def _transpose_lowering(
    ctx: LoweringRuleContext, x: IrValue, *, permutation: Sequence[int]
) -> list[IrValue]:
    attrs = {"permutation": _hlo.dense_i64_array(ctx.caches, permutation)}
    return [_hlo.emit1("stablehlo.transpose", out_type(ctx), x, attributes=attrs)]


@register(lax.rev_p)
def _rev_lowering(
    ctx: LoweringRuleContext, x: IrValue, *, dimensions: Sequence[int]
) -> list[IrValue]:
    attrs = {"dimensions": _hlo.dense_i64_array(ctx.caches, dimensions)}
    return [_hlo.emit1("stablehlo.reverse", out_type(ctx), x, attributes=attrs)]


@register(lax.tile_p)
def _tile_lowering(ctx: LoweringRuleContext, x: IrValue, *, reps: Sequence[int]) -> list[IrValue]:
    aval = array_aval(ctx.avals_in[0])
    caches = ctx.caches
    expanded = tuple(d for size in aval.shape for d in (1, size))
    x = _hlo.reshape(caches, x, expanded, aval.dtype)
    tiled = tuple(int(d) for pair in zip(reps, aval.shape, strict=True) for d in pair)
    x = _hlo.broadcast_in_dim(caches, x, tiled, aval.dtype, range(2 * aval.ndim))
    return [_hlo.emit1("stablehlo.reshape", out_type(ctx), x)]


@register(lax.iota_p)
def _iota_lowering(ctx: LoweringRuleContext, *, dimension: int, **params: Any) -> list[IrValue]:
    aval = out_aval(ctx)
    if _dynamic.is_dynamic(aval.shape):
        return [_dynamic.iota(ctx.caches, aval.shape, aval.dtype, dimension)]
    attrs = {"iota_dimension": _hlo.i64_attr(ctx.caches, dimension)}
    return [_hlo.emit1("stablehlo.iota", out_type(ctx), attributes=attrs)]


@register(lax.dim_as_value_p)
def _dim_as_value_lowering(ctx: LoweringRuleContext, *, dim: Any) -> list[IrValue]:
    value = _dynamic.eval_dim(ctx.caches, dim)
    aval = out_aval(ctx)
    if aval.dtype != _dynamic.dim_dtype():
        value = _hlo.convert(ctx.caches, value, (), aval.dtype)
    return [value]


@register(empty2_p)
def _empty2_lowering(ctx: LoweringRuleContext, **params: Any) -> list[IrValue]:
    # Nothing reads it: zeros are as good as anything and let XLA fold the slot away.
    aval = out_aval(ctx)
    return [ir_constant(ctx.caches, np.zeros((), aval.dtype), aval)]
