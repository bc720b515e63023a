"""Lowering of `remat2` (its jaxpr, inlined) and of `name` (the identity).

Which values are saved or recomputed was decided when the program was differentiated; the
compiled program computes the body as it stands. (JAX also wraps a differentiated body in an
optimization barrier when `prevent_cse`; XLA may then merge recomputations Lamina keeps apart.)
"""

from __future__ import annotations

from typing import Any

from lamina_core.checkpoint import name_p, remat_p
from lamina_core.jaxpr import Jaxpr
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._lower import jaxpr_subcomp
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._rules_util import register


@register(remat_p)
def _remat_lowering(
    ctx: LoweringRuleContext, *args: IrValue, jaxpr: Jaxpr, **params: Any
) -> list[IrValue]:
    outs, tokens = jaxpr_subcomp(
        ctx.module_context,
        jaxpr,
        ctx.name_stack,
        ctx.tokens_in,
        [],
        *args,
        const_lowering=ctx.const_lowering,
    )
    if len(tokens):
        ctx.set_tokens_out(tokens)
    return list(outs)


@register(name_p)
def _name_lowering(ctx: LoweringRuleContext, x: IrValue, *, name: str) -> list[IrValue]:
    return [x]
