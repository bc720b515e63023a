"""Lowering of `optimization_barrier`: `stablehlo.optimization_barrier` over its operands."""

from __future__ import annotations

from jaxlib.mlir.dialects import stablehlo as hlo

from lamina_core.lax import optimization_barrier_p
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._rules_util import register


@register(optimization_barrier_p)
def _barrier_lowering(ctx: LoweringRuleContext, *args: IrValue) -> list[IrValue]:
    return list(hlo.OptimizationBarrierOp(list(args)).results)
