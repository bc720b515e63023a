"""Lowering of `igamma`, `igammac`, `igamma_grad_a` and `regularized_incomplete_beta`, as JAX's:
XLA's series and continued fractions (`lax._igamma_impl`), written with `lax` ops, traced on the
operands broadcast to the result's shape (16-bit floats in float32) and lowered in place."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core.interpreters import trace_to_jaxpr
from lamina_core.ir import Primitive
from lamina_core.lax import (
    IMPLS,
    igamma_grad_a_p,
    igamma_p,
    igammac_p,
    regularized_incomplete_beta_p,
    up_and_broadcast,
)
from lamina_mlir._constants import ir_constant
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._lower import jaxpr_subcomp
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._rules_util import register


def _register_traced(prim: Primitive) -> None:
    fn = up_and_broadcast(IMPLS[prim.name])

    @register(prim)
    def _lowering(ctx: LoweringRuleContext, *args: IrValue) -> Any:
        closed = trace_to_jaxpr(lambda *xs: [fn(*xs)], ctx.avals_in)
        caches = ctx.module_context.caches
        consts = [ir_constant(caches, np.asarray(v)) for v in closed.consts]
        outs, _ = jaxpr_subcomp(
            ctx.module_context,
            closed.jaxpr,
            ctx.name_stack,
            ctx.tokens_in,
            consts,
            *args,
            const_lowering=ctx.const_lowering,
        )
        return outs


for _prim in (igamma_p, igammac_p, igamma_grad_a_p, regularized_incomplete_beta_p):
    _register_traced(_prim)
