"""Lowering of `composite` as JAX's: a `stablehlo.composite` op naming the operation, its
attributes (`composite_attributes`, when there are any) and version (when not 0), whose
decomposition is the staged function, lowered as a private function named after it."""

from __future__ import annotations

from typing import Any

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from lamina_consts import jaxpr_const_args
from lamina_core.ir import ClosedJaxpr
from lamina_core.lax import AttributeTree, composite_p
from lamina_mlir import _dynamic
from lamina_mlir._constants import ir_constant
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._functions import symbol_name
from lamina_mlir._lower import lower_jaxpr_to_fun
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._rules_ffi import ir_attribute
from lamina_mlir._rules_util import register


@register(composite_p)
def _composite_lowering(
    ctx: LoweringRuleContext,
    *args: IrValue,
    name: str,
    attributes: tuple[tuple[str, tuple[Any, ...], AttributeTree], ...],
    version: int,
    jaxpr: ClosedJaxpr,
) -> list[IrValue]:
    mctx = ctx.module_context
    const_args = jaxpr_const_args(jaxpr)
    # The decomposition takes the dimension variables first, as every function JAX lowers
    # under shape polymorphism; the composite op does not pass them, so such a module does
    # not verify (JAX's ValueError too).
    dim_vars = tuple(_dynamic.current_values())
    fn = lower_jaxpr_to_fun(mctx, name, jaxpr, const_args=const_args, dim_vars=dim_vars)
    consts = [ir_constant(ctx.caches, v, a, ctx.const_lowering) for v, a in const_args]
    values = {key: tree.unflatten(leaves) for key, leaves, tree in attributes}
    # Each value converted as any attribute is (as JAX's lowering does): a NumPy scalar is a
    # scalar attribute, a dtype a type, a tuple an array of attributes.
    composite_attrs = {k: ir_attribute(v) for k, v in values.items() if v is not None}
    out_types = [mctx.ir_type(a) for a in ctx.avals_out]
    op = hlo.CompositeOp(
        out_types,
        [*consts, *args],
        name=ir.StringAttr.get(name),
        decomposition=ir.FlatSymbolRefAttr.get(symbol_name(fn)),
        composite_attributes=ir.DictAttr.get(composite_attrs),
        version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), version),
        num_composite_regions=0,
    )
    return list(op.results)
