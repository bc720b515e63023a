"""Lowering of `remat2` (its body, inlined under the name `checkpoint`) and of `name` (the
identity).

Which values are saved or recomputed was decided when the program was differentiated; here
the body is lowered as it stands. As JAX's `remat_lowering`: a differentiated remat with
`prevent_cse` first passes its (flagged) operands through an optimization barrier, so XLA
cannot merge the recomputation with the original computation, which would undo the remat.
"""

from __future__ import annotations

from typing import Any

from jaxlib.mlir.dialects import stablehlo as hlo

from lamina_core.checkpoint import name_p, remat_p
from lamina_core.ir import Jaxpr
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._lower import jaxpr_subcomp
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._rules_util import register


@register(remat_p)
def _remat_lowering(
    ctx: LoweringRuleContext,
    *args: IrValue,
    jaxpr: Jaxpr,
    prevent_cse: bool | tuple[bool, ...],
    differentiated: bool,
    policy: Any,
) -> list[IrValue]:
    flags = (prevent_cse,) * len(args) if isinstance(prevent_cse, bool) else prevent_cse
    operands = list(args)
    if differentiated and any(flags):
        guarded = [a for a, f in zip(operands, flags, strict=True) if f]
        barrier = iter(hlo.OptimizationBarrierOp(guarded).results)
        operands = [next(barrier) if f else a for a, f in zip(operands, flags, strict=True)]
    name_stack = f"{ctx.name_stack}/checkpoint" if ctx.name_stack else "checkpoint"
    outs, tokens = jaxpr_subcomp(
        ctx.module_context,
        jaxpr,
        name_stack,
        ctx.tokens_in,
        [],
        *operands,
        const_lowering=ctx.const_lowering,
    )
    if len(tokens):
        ctx.set_tokens_out(tokens)
    return list(outs)


@register(name_p)
def _name_lowering(ctx: LoweringRuleContext, x: IrValue, *, name: str) -> list[IrValue]:
    return [x]
