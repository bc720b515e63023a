"""Lowering of the small `lax` primitives of `lamina_core.lax._misc_prims`, as JAX's on CPU.

`mulhi` is `chlo.mulhi`; the total-order comparisons compare floats with XLA's TOTALORDER;
`empty` is a zero broadcast to its shape (JAX's lowering off TPU and GPU); `copy` and `stage`
are the identity; `dce_sink` emits nothing unless asked to survive the compiler's own
dead-code elimination, when it is a side-effecting `dce_sink` custom call. Tokens are
`!stablehlo.token`s, made by `stablehlo.create_token` and merged by `stablehlo.after_all`.
`device_put` on one device is the identity; `custom_linear_solve` is its solve, inline;
`ragged_dot_general` is its dense program, inline.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from lamina_core.ir import AbstractValue
from lamina_core.lax import (
    AbstractToken,
    after_all_p,
    copy_p,
    create_token_p,
    dce_sink_p,
    dense_jaxpr,
    device_put_p,
    empty_p,
    eq_to_p,
    le_to_p,
    linear_solve_p,
    lt_to_p,
    mulhi_p,
    ragged_dot_general_p,
    stage_p,
)
from lamina_mlir import _hlo
from lamina_mlir._constants import ir_constant
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._ir_types import ir_type_rules
from lamina_mlir._lower import jaxpr_subcomp
from lamina_mlir._mlir_context import ContextCaches, IrValue
from lamina_mlir._rules_util import (
    array_aval,
    broadcast_operands,
    out_aval,
    register,
    register_nary,
)

register_nary(mulhi_p, "chlo.mulhi")


def _total_order_comparison(direction: str) -> Callable[..., list[IrValue]]:
    def rule(ctx: LoweringRuleContext, x: IrValue, y: IrValue) -> list[IrValue]:
        a, b = broadcast_operands(ctx, (x, y), ctx.avals_in, out_aval(ctx).shape)
        dtype = array_aval(ctx.avals_in[0]).dtype
        kind = "TOTALORDER" if _hlo.kind(dtype) in "fc" else _hlo.compare_type(dtype)
        return [_hlo.compare(ctx.caches, a, b, direction, kind)]

    return rule


register(eq_to_p)(_total_order_comparison("EQ"))
register(le_to_p)(_total_order_comparison("LE"))
register(lt_to_p)(_total_order_comparison("LT"))


@register(empty_p)
def _empty_lowering(ctx: LoweringRuleContext, **params: Any) -> list[IrValue]:
    aval = out_aval(ctx)
    zero = _hlo.scalar_constant(ctx.caches, 0, aval.dtype)
    return [_hlo.broadcast_in_dim(ctx.caches, zero, aval.shape, aval.dtype, ())]


def _identity_lowering(ctx: LoweringRuleContext, x: IrValue) -> list[IrValue]:
    return [x]


register(copy_p)(_identity_lowering)
register(stage_p)(_identity_lowering)


@register(dce_sink_p)
def _dce_sink_lowering(
    ctx: LoweringRuleContext, x: IrValue, *, prevent_mlir_dce: bool
) -> list[IrValue]:
    if not prevent_mlir_dce:
        return []
    rank = array_aval(ctx.avals_in[0]).ndim
    layout = ir.DenseElementsAttr.get(
        np.arange(rank - 1, -1, -1, dtype=np.int64),  # type: ignore[call-overload]  # a buffer
        type=ir.IndexType.get(),
    )
    attributes: dict[str, ir.Attribute] = {
        "call_target_name": ir.StringAttr.get("dce_sink"),
        "has_side_effect": ir.BoolAttr.get(True),
        "backend_config": ir.StringAttr.get(""),
        "operand_layouts": ir.ArrayAttr.get([layout]),
        "result_layouts": ir.ArrayAttr.get([]),
    }
    op = hlo.CustomCallOp.build_generic(results=[], operands=[x], attributes=attributes)
    op.operation.attributes["mhlo.backend_config"] = ir.DictAttr.get({})
    return []


def _token_type(caches: ContextCaches, aval: AbstractValue) -> ir.Type:
    return hlo.TokenType.get()


ir_type_rules[AbstractToken] = _token_type


@register(create_token_p)
def _create_token_lowering(ctx: LoweringRuleContext, *args: IrValue) -> list[IrValue]:
    return [hlo.create_token()]


@register(after_all_p)
def _after_all_lowering(ctx: LoweringRuleContext, *tokens: IrValue) -> list[IrValue]:
    return [hlo.after_all(list(tokens))]


@register(device_put_p)
def _device_put_lowering(ctx: LoweringRuleContext, *xs: IrValue, **params: Any) -> list[IrValue]:
    return list(xs)


@register(linear_solve_p)
def _linear_solve_lowering(
    ctx: LoweringRuleContext, *args: IrValue, const_lengths: Any, jaxprs: Any
) -> list[IrValue]:
    # As JAX: the solve itself, inline.
    solve = jaxprs.solve
    skip = const_lengths.matvec + const_lengths.vecmat
    operands = [*args[skip : skip + const_lengths.solve], *args[sum(const_lengths) :]]
    consts = [
        ir_constant(ctx.caches, c, v.aval)
        for c, v in zip(solve.consts, solve.jaxpr.constvars, strict=True)
    ]
    outs, _ = jaxpr_subcomp(
        ctx.module_context,
        solve.jaxpr,
        ctx.name_stack,
        ctx.tokens_in,
        consts,
        *operands,
        const_lowering=ctx.const_lowering,
    )
    return list(outs)


@register(ragged_dot_general_p)
def _ragged_dot_general_lowering(
    ctx: LoweringRuleContext, *args: IrValue, **params: Any
) -> list[IrValue]:
    # As JAX off TPU: the dense program, inline.
    closed = dense_jaxpr(ctx.avals_in, params)
    consts = [
        ir_constant(ctx.caches, c, v.aval)
        for c, v in zip(closed.consts, closed.jaxpr.constvars, strict=True)
    ]
    outs, _ = jaxpr_subcomp(
        ctx.module_context, closed.jaxpr, ctx.name_stack, ctx.tokens_in, consts, *args,
        const_lowering=ctx.const_lowering,
    )  # fmt: skip
    return list(outs)
