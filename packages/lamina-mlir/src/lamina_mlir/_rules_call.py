"""Lowering of the `jit` call primitive: a private function per callee, and a `func.call`.

The callee is lowered once per module (per callee jaxpr and name) as `func.func private
@name`, with its own, smaller set of const args (`jaxpr_const_args` of the callee, each
`{jax.const = true}`); every call site passes them from the caller's `const_lowering`, so a
constant both functions use travels as the caller's argument (seed 000). `inline=True` lowers
the callee into the caller's block instead.
"""

from __future__ import annotations

from typing import Any

from lamina_consts import jaxpr_const_args
from lamina_core import jit_p
from lamina_core.ir import ClosedJaxpr
from lamina_core.transforms import closed_call_p
from lamina_mlir import _dynamic
from lamina_mlir._constants import ir_constant
from lamina_mlir._context import LoweringRuleContext, ordered_effects
from lamina_mlir._functions import call, symbol_name
from lamina_mlir._locations import eqn_location
from lamina_mlir._lower import jaxpr_subcomp, lower_jaxpr_to_fun
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._rules_util import register


@register(jit_p)
def _jit_lowering(
    ctx: LoweringRuleContext,
    *args: IrValue,
    jaxpr: ClosedJaxpr,
    name: str,
    inline: bool = False,
    **params: Any,
) -> list[IrValue]:
    mctx = ctx.module_context
    caches = mctx.caches
    if inline:
        consts = [
            ir_constant(caches, c, v.aval)
            for c, v in zip(jaxpr.consts, jaxpr.constvars, strict=True)
        ]
        outs, tokens = jaxpr_subcomp(
            mctx,
            jaxpr.jaxpr,
            ctx.name_stack,
            ctx.tokens_in,
            consts,
            *args,
            const_lowering=ctx.const_lowering,
        )
        if len(tokens):
            ctx.set_tokens_out(tokens)
        return outs
    effects = ordered_effects(jaxpr.effects)
    # Under shape polymorphism every function takes the dimension variables first (JAX's).
    dims = _dynamic.current_values()
    key = ("jit", name, jaxpr.jaxpr, tuple(id(c) for c in jaxpr.consts))
    found = mctx.functions.get(key)
    if found is None:
        const_args = jaxpr_const_args(jaxpr)
        fn = lower_jaxpr_to_fun(
            mctx, name, jaxpr, const_args=const_args, effects=effects, dim_vars=tuple(dims)
        )
        # The key holds the callee jaxpr and its consts alive, so their ids stay theirs.
        found = mctx.functions[key] = (symbol_name(fn), const_args, tuple(jaxpr.consts))
    symbol, const_args, _ = found
    const_values = [
        ir_constant(caches, value, aval, ctx.const_lowering) for value, aval in const_args
    ]
    tokens_in = [ctx.tokens_in.get(e) for e in effects]
    out_types = [
        *(t.type for t in tokens_in),
        *(mctx.ir_type(a) for a in ctx.avals_out),
    ]
    with eqn_location(mctx, ctx.name_stack, f"jit({name})", ctx.source_info):
        results = call(symbol, out_types, [*dims.values(), *tokens_in, *const_values, *args])
    if effects:
        ctx.set_tokens_out(ctx.tokens_in.update(dict(zip(effects, results, strict=False))))
    return results[len(effects) :]


@register(closed_call_p)
def _closed_call_lowering(
    ctx: LoweringRuleContext, *args: IrValue, call_jaxpr: ClosedJaxpr
) -> list[IrValue]:
    # A private function like a jit's callee, as JAX lowers it (XLA inlines it).
    return list(_jit_lowering(ctx, *args, jaxpr=call_jaxpr, name="closed_call"))
