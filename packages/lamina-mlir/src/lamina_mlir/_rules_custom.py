"""Lowering of the custom-derivative call primitives: their `call_jaxpr`, inlined.

The user's derivative rules matter only to transformations; compiled code computes the
function itself, as JAX lowers it (`linear_call` and `remat_opt` likewise run their callee).
`custom_lin` (forward mode of a custom_vjp function) has no lowering: JAX refuses to evaluate
it too.
"""

from __future__ import annotations

from typing import Any

from lamina_core.custom_derivatives import (
    custom_jvp_call_p,
    custom_lin_p,
    custom_vjp_call_p,
    custom_vmap_p,
    linear_call_p,
    remat_opt_p,
)
from lamina_core.ir import ClosedJaxpr
from lamina_core.lax import stop_gradient_p
from lamina_mlir._constants import ir_constant
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._lower import jaxpr_subcomp
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._rules_util import register


def _lower_call_jaxpr(
    ctx: LoweringRuleContext, *args: IrValue, call_jaxpr: ClosedJaxpr, **params: Any
) -> list[IrValue]:
    mctx = ctx.module_context
    consts = [
        ir_constant(mctx.caches, c, v.aval)
        for c, v in zip(call_jaxpr.consts, call_jaxpr.jaxpr.constvars, strict=True)
    ]
    outs, tokens = jaxpr_subcomp(
        mctx,
        call_jaxpr.jaxpr,
        ctx.name_stack,
        ctx.tokens_in,
        consts,
        *args,
        const_lowering=ctx.const_lowering,
    )
    if len(tokens):
        ctx.set_tokens_out(tokens)
    return list(outs)


register(custom_jvp_call_p)(_lower_call_jaxpr)
register(custom_vjp_call_p)(_lower_call_jaxpr)


@register(linear_call_p)
def _linear_call_lowering(
    ctx: LoweringRuleContext, *args: IrValue, callee: ClosedJaxpr, **params: Any
) -> list[IrValue]:
    return _lower_call_jaxpr(ctx, *args, call_jaxpr=callee)


@register(remat_opt_p)
def _remat_opt_lowering(
    ctx: LoweringRuleContext, *args: IrValue, fwd_jaxpr: ClosedJaxpr, **params: Any
) -> list[IrValue]:
    return _lower_call_jaxpr(ctx, *args, call_jaxpr=fwd_jaxpr)


@register(custom_vmap_p)
def _custom_vmap_lowering(
    ctx: LoweringRuleContext, *args: IrValue, call: ClosedJaxpr, **params: Any
) -> list[IrValue]:
    # A custom_vmap function outside vmap computes its own jaxpr (JAX lowers it so too).
    return _lower_call_jaxpr(ctx, *args, call_jaxpr=call)


@register(stop_gradient_p)
def _stop_gradient_lowering(ctx: LoweringRuleContext, x: IrValue) -> list[IrValue]:
    return [x]


@register(custom_lin_p)
def _custom_lin_lowering(ctx: LoweringRuleContext, *args: IrValue, **params: Any) -> list[IrValue]:
    # What JAX says when forward mode of a custom_vjp function is evaluated.
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")
