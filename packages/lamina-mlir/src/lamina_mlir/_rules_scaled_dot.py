"""Lowering of `scaled_dot` and `scaled_matmul_wrapper` (`nn.scaled_matmul`): the
decomposition (`lax._scaled_dot.decomposition`: scales repeated over their blocks, multiplied
into the bfloat16 operands, then `dot_general`) traced on the operands and lowered in place.
JAX wraps the same decomposition in a `stablehlo.composite` "xla.scaled_dot", which XLA's CPU
backend inlines: the values agree. `scaled_matmul_wrapper` is lowered as JAX lowers it for
ROCm (JAX has no CPU lowering): the same decomposition, batch dimension 0 and contracting
dimension 2 of both operands."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core.interpreters import trace_to_jaxpr
from lamina_core.lax import decomposition, scaled_dot_p
from lamina_core.nn import MATMUL_DIMENSION_NUMBERS, scaled_matmul_wrapper_p
from lamina_mlir._constants import ir_constant
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._lower import jaxpr_subcomp
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._rules_util import register


def _lower_decomposition(ctx: LoweringRuleContext, args: tuple[IrValue, ...], **params: Any) -> Any:
    closed = trace_to_jaxpr(lambda *xs: [decomposition(*xs, **params)], ctx.avals_in)
    consts = [ir_constant(ctx.module_context.caches, np.asarray(v)) for v in closed.consts]
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


@register(scaled_dot_p)
def _scaled_dot_lowering(ctx: LoweringRuleContext, *args: IrValue, **params: Any) -> Any:
    return _lower_decomposition(ctx, args, **params)


@register(scaled_matmul_wrapper_p)
def _scaled_matmul_lowering(
    ctx: LoweringRuleContext, *args: IrValue, preferred_element_type: Any
) -> Any:
    return _lower_decomposition(
        ctx,
        args,
        dimension_numbers=MATMUL_DIMENSION_NUMBERS,
        preferred_element_type=preferred_element_type,
    )
