"""Lowering of `dot_general`.

One `stablehlo.dot_general` with the equation's dimension numbers and a precision config for
both operands (DEFAULT where none was given). Operands of different dtypes are converted to
the result dtype first, as JAX does for CPU and GPU, except pairs of 8-bit floats, which the
backends multiply as they are.
"""

from __future__ import annotations

from typing import Any

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from lamina_core import dtypes, lax
from lamina_mlir import _hlo
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._rules_util import array_aval, out_aval, out_type, register

_FP8 = frozenset(
    {
        dtypes.float8_e4m3fn,
        dtypes.float8_e5m2,
        dtypes.float8_e5m2fnuz,
        dtypes.float8_e4m3fnuz,
        dtypes.float8_e3m4,
        dtypes.float8_e4m3,
        dtypes.float8_e8m0fnu,
    }
)


def _precision_config(ctx: LoweringRuleContext, precision: Any) -> ir.Attribute:
    # None and the DEFAULT dot algorithm preset (the only one Lamina takes) lower alike.
    default = precision is None or not isinstance(precision, tuple)
    pair = ("DEFAULT", "DEFAULT") if default else tuple(p.name for p in precision)
    key = ("precision", pair)
    found = ctx.caches.attributes.get(key)
    if found is None:
        found = ir.ArrayAttr.get([hlo.PrecisionAttr.get(p) for p in pair])
        ctx.caches.attributes[key] = found
    return found


@register(lax.dot_general_p)
def _dot_general_lowering(
    ctx: LoweringRuleContext,
    lhs: IrValue,
    rhs: IrValue,
    *,
    dimension_numbers: Any,
    precision: Any,
    **params: Any,
) -> list[IrValue]:
    lhs_aval, rhs_aval = (array_aval(a) for a in ctx.avals_in)
    dtype = out_aval(ctx).dtype
    if lhs_aval.dtype != rhs_aval.dtype and not (lhs_aval.dtype in _FP8 and rhs_aval.dtype in _FP8):
        lhs = _hlo.convert_hlo(ctx.caches, lhs, lhs_aval.shape, lhs_aval.dtype, dtype)
        rhs = _hlo.convert_hlo(ctx.caches, rhs, rhs_aval.shape, rhs_aval.dtype, dtype)
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    numbers = hlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=list(lhs_batch),
        rhs_batching_dimensions=list(rhs_batch),
        lhs_contracting_dimensions=list(lhs_contract),
        rhs_contracting_dimensions=list(rhs_contract),
    )
    attrs = {
        "dot_dimension_numbers": numbers,
        "precision_config": _precision_config(ctx, precision),
    }
    return [_hlo.emit1("stablehlo.dot_general", out_type(ctx), lhs, rhs, attributes=attrs)]
