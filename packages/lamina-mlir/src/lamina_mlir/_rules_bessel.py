"""Lowering of `bessel_i0e` and `bessel_i1e`, as JAX's: `chlo.bessel_i1e`, and for `bessel_i0e`
Cephes' Chebyshev expansions (`lax._bessel.i0e_expansion`) traced and lowered in place."""

from __future__ import annotations

from lamina_core.interpreters import trace_to_jaxpr
from lamina_core.lax import bessel_i0e_p, bessel_i1e_p, i0e_expansion
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._lower import jaxpr_subcomp
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._rules_util import register, register_nary

register_nary(bessel_i1e_p, "chlo.bessel_i1e")


@register(bessel_i0e_p)
def _bessel_i0e_lowering(ctx: LoweringRuleContext, x: IrValue) -> list[IrValue]:
    closed = trace_to_jaxpr(lambda v: [i0e_expansion(v)], ctx.avals_in)
    assert not closed.jaxpr.constvars  # the expansion's constants are scalar literals
    outs, _ = jaxpr_subcomp(
        ctx.module_context,
        closed.jaxpr,
        ctx.name_stack,
        ctx.tokens_in,
        [],
        x,
        const_lowering=ctx.const_lowering,
    )
    return outs
