"""Helpers the rule modules share: broadcasting operands, the output type, registration.

Elementwise primitives accept rank-0 operands next to arrays, and size-1 dimensions against
larger ones; their lowering broadcasts such operands to the output shape first
(`broadcast_in_dim` over the trailing dimensions), as JAX's does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from jaxlib.mlir import ir

from lamina_core.ir import AbstractValue, Primitive, ShapedArray
from lamina_mlir import _hlo
from lamina_mlir._context import (
    LoweringRule,
    LoweringRuleContext,
    lowering_rules,
    single_op_rules,
)
from lamina_mlir._explicit import broadcast_to_result, explicit_module
from lamina_mlir._ir_types import aval_to_ir_type
from lamina_mlir._mlir_context import IrValue


def array_aval(aval: AbstractValue) -> ShapedArray:
    if not isinstance(aval, ShapedArray):
        raise TypeError(f"lowering expects array operands, got {aval.str_short(True)}")
    return aval


def out_aval(ctx: LoweringRuleContext, i: int = 0) -> ShapedArray:
    return array_aval(ctx.avals_out[i])


def out_type(ctx: LoweringRuleContext, i: int = 0) -> ir.Type:
    return ctx.module_context.ir_type(ctx.avals_out[i])


def broadcast_operands(
    ctx: LoweringRuleContext,
    operands: Sequence[IrValue],
    avals: Sequence[AbstractValue],
    shape: tuple[int, ...],
) -> list[IrValue]:
    """Each operand broadcast (over trailing dimensions) to `shape`, if it is not already
    (over Explicit mesh axes, also constrained to the result's sharding, as JAX's)."""
    if explicit_module(ctx):
        return broadcast_to_result(ctx, operands, avals, out_aval(ctx))
    out = []
    for x, aval in zip(operands, avals, strict=True):
        a = array_aval(aval)
        if a.shape != shape:
            dims = range(len(shape) - a.ndim, len(shape))
            x = _hlo.broadcast_in_dim(ctx.caches, x, shape, a.dtype, dims)
        out.append(x)
    return out


def nary(ctx: LoweringRuleContext, name: str, *operands: IrValue) -> IrValue:
    """The elementwise op `name` on the operands broadcast to the output shape."""
    aval = out_aval(ctx)
    shape = aval.shape
    if explicit_module(ctx):
        operands = tuple(broadcast_to_result(ctx, operands, ctx.avals_in, aval))
        return _hlo.emit1(name, aval_to_ir_type(ctx.caches, aval), *operands)
    for a in ctx.avals_in:
        if array_aval(a).shape != shape:
            operands = tuple(broadcast_operands(ctx, operands, ctx.avals_in, shape))
            break
    return _hlo.emit1(name, aval_to_ir_type(ctx.caches, aval), *operands)


def full_like(ctx: LoweringRuleContext, value: Any, aval: AbstractValue) -> IrValue:
    a = array_aval(aval)
    return _hlo.full(ctx.caches, value, a.shape, a.dtype)


def register_nary(prim: Primitive, name: str) -> None:
    """Register `prim` as the elementwise op `name` (params, if any, do not matter)."""

    def rule(ctx: LoweringRuleContext, *operands: IrValue, **params: Any) -> list[IrValue]:
        return [nary(ctx, name, *operands)]

    lowering_rules.set(prim, rule)
    single_op_rules[prim] = (name, False)


def register(prim: Primitive) -> Callable[[LoweringRule], LoweringRule]:
    return lowering_rules.register(prim)
