"""Lowering of `approx_top_k` as JAX's off TPU: the `ApproxTopK` custom call, marked as a
fallback (XLA then computes it exactly), over the operand and an iota of indices, with a
comparator function emitted at the top of the module."""

from __future__ import annotations

from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from lamina_core.lax import approx_top_k_p
from lamina_mlir import _hlo
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._ir_types import dtype_to_ir_type, tensor_type
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._rules_util import array_aval, register


def _comparator(ctx: LoweringRuleContext, dtype: np.dtype[Any], is_max_k: bool) -> str:
    element = dtype_to_ir_type(ctx.caches, dtype)
    scalar = ir.RankedTensorType.get([], element)
    index = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
    result = ir.RankedTensorType.get([], ir.IntegerType.get_signless(1))
    direction = "GT" if is_max_k else "LT"
    fn_type = ir.FunctionType.get([scalar, scalar, index, index], [result])
    attributes = {
        "sym_name": ir.StringAttr.get(f"top_k_{direction.lower()}_{element}_comparator"),
        "function_type": ir.TypeAttr.get(fn_type),
    }
    mctx = ctx.module_context
    with ir.InsertionPoint.at_block_begin(mctx.module.body):
        fn = ir.Operation.create("func.func", attributes=attributes, regions=1)
    mctx.symbol_table.insert(fn)
    entry = fn.regions[0].blocks.append(scalar, scalar, index, index)
    with ir.InsertionPoint(entry):
        a, b = entry.arguments[0], entry.arguments[1]
        hlo.return_([hlo.compare(a, b, hlo.ComparisonDirectionAttr.get(direction))])
    return ir.StringAttr(fn.attributes["sym_name"]).value


@register(approx_top_k_p)
def _approx_top_k_lowering(
    ctx: LoweringRuleContext,
    operand: IrValue,
    *,
    k: int,
    reduction_dimension: int,
    recall_target: float,
    is_max_k: bool,
    reduction_input_size_override: int,
    aggregate_to_topk: bool,
) -> list[IrValue]:
    caches = ctx.caches
    aval = array_aval(ctx.avals_in[0])
    axis = reduction_dimension + aval.ndim if reduction_dimension < 0 else reduction_dimension
    comparator = _comparator(ctx, aval.dtype, is_max_k)
    iota_type = tensor_type(caches, aval.shape, np.dtype(np.int32))
    iota = hlo.iota(iota_type, axis)
    no_index = _hlo.constant(caches, np.array(-1, np.int32))
    init = _hlo.constant(caches, np.array(-np.inf if is_max_k else np.inf, aval.dtype))
    i64 = ir.IntegerType.get_signless(64)
    config = {
        "reduction_dim": ir.IntegerAttr.get(i64, axis),
        "recall_target": ir.FloatAttr.get(ir.F32Type.get(), recall_target),
        "aggregate_to_topk": ir.BoolAttr.get(aggregate_to_topk),
        "reduction_input_size_override": ir.IntegerAttr.get(i64, reduction_input_size_override),
        "is_fallback": ir.BoolAttr.get(True),
        "top_k": ir.IntegerAttr.get(i64, k),
    }
    attributes: dict[str, ir.Attribute] = {
        "call_target_name": ir.StringAttr.get("ApproxTopK"),
        "backend_config": ir.StringAttr.get(""),
        "called_computations": ir.ArrayAttr.get([ir.FlatSymbolRefAttr.get(comparator)]),
    }
    out_types = [ctx.module_context.ir_type(a) for a in ctx.avals_out]
    op = hlo.CustomCallOp.build_generic(
        results=out_types, operands=[operand, iota, init, no_index], attributes=attributes
    )
    op.operation.attributes["mhlo.backend_config"] = ir.DictAttr.get(config)
    return list(op.results)
