"""Lowering of `sharding_constraint` to `sdy.sharding_constraint` over the module's mesh,
and of `reshard`.

Unconstrained dimensions are open (`{?}`), the partitioner's to choose. A module lowered for
one device has nothing to constrain: the value passes through. A `reshard` moves a value onto
a mesh of Auto or Manual axes, where its spec is all open: JAX emits nothing for it, nor does
Lamina (the partitioner places it).
"""

from __future__ import annotations

from typing import Any

from jaxlib.mlir.dialects import sdy

from lamina_core.ir import NamedSharding
from lamina_core.lax import reshard_p, sharding_constraint_p
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._rules_util import out_aval, register
from lamina_mlir._sharding import physical_ndim, sharding_attr


@register(sharding_constraint_p)
def _sharding_constraint_lowering(
    ctx: LoweringRuleContext, x: IrValue, *, sharding: NamedSharding, **params: Any
) -> list[IrValue]:
    mesh = ctx.module_context.mesh
    if mesh is None:
        return [x]
    attr = sharding_attr(sharding.spec, physical_ndim(out_aval(ctx)), mesh)
    return [sdy.ShardingConstraintOp(x, attr).result]


@register(reshard_p)
def _reshard_lowering(ctx: LoweringRuleContext, x: IrValue, **params: Any) -> list[IrValue]:
    return [x]
