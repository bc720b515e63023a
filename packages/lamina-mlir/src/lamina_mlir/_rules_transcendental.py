"""Lowering of the transcendental and special-function primitives.

StableHLO has exp, log, tanh, sin, cos, tan, sqrt, rsqrt, cbrt and atan2 (which take JAX's
`accuracy` as a `result_accuracy` attribute); the inverse and hyperbolic functions, erf and the
gamma family are CHLO ops, as in JAX. `exp2` is `exp(log(2) * x)`, `logistic` is
`1 / (1 + exp(-x))`, and the sine and cosine of complex numbers are built from real ones with
`expm1`, all as JAX lowers them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from lamina_core import dtypes, lax
from lamina_mlir import _hlo
from lamina_mlir._context import LoweringRuleContext, single_op_rules
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._rules_util import array_aval, out_type, register, register_nary


def _accuracy_attr(accuracy: Any) -> ir.Attribute | None:
    if accuracy is None:
        return None
    if isinstance(accuracy, lax.AccuracyMode):
        return hlo.ResultAccuracyAttr.get(0.0, 0.0, 0, accuracy.name)
    if isinstance(accuracy, lax.Tolerance):
        return hlo.ResultAccuracyAttr.get(
            atol=accuracy.atol, rtol=accuracy.rtol, ulps=accuracy.ulps, mode="TOLERANCE"
        )
    raise NotImplementedError(f"lowering: accuracy {accuracy!r} is not supported")


def _with_accuracy(ctx: LoweringRuleContext, name: str, x: IrValue, accuracy: Any) -> IrValue:
    attr = _accuracy_attr(accuracy)
    attributes = None if attr is None else {"result_accuracy": attr}
    return _hlo.emit1(name, out_type(ctx), x, attributes=attributes)


def _accurate(name: str) -> Any:
    def rule(ctx: LoweringRuleContext, x: IrValue, *, accuracy: Any = None) -> list[IrValue]:
        return [_with_accuracy(ctx, name, x, accuracy)]

    return rule


for _prim, _name in (
    (lax.exp_p, "stablehlo.exponential"),
    (lax.log_p, "stablehlo.log"),
    (lax.expm1_p, "stablehlo.exponential_minus_one"),
    (lax.log1p_p, "stablehlo.log_plus_one"),
    (lax.tanh_p, "stablehlo.tanh"),
    (lax.tan_p, "stablehlo.tan"),
    (lax.sqrt_p, "stablehlo.sqrt"),
    (lax.rsqrt_p, "stablehlo.rsqrt"),
    (lax.cbrt_p, "stablehlo.cbrt"),
):
    register(_prim)(_accurate(_name))
    single_op_rules[_prim] = (_name, False)

for _prim, _name in (
    (lax.asin_p, "chlo.asin"),
    (lax.acos_p, "chlo.acos"),
    (lax.atan_p, "chlo.atan"),
    (lax.sinh_p, "chlo.sinh"),
    (lax.cosh_p, "chlo.cosh"),
    (lax.asinh_p, "chlo.asinh"),
    (lax.acosh_p, "chlo.acosh"),
    (lax.atanh_p, "chlo.atanh"),
    (lax.erf_p, "chlo.erf"),
    (lax.erfc_p, "chlo.erfc"),
    (lax.erf_inv_p, "chlo.erf_inv"),
    (lax.lgamma_p, "chlo.lgamma"),
    (lax.digamma_p, "chlo.digamma"),
    (lax.atan2_p, "stablehlo.atan2"),
):
    register_nary(_prim, _name)


@register(lax.exp2_p)
def _exp2_lowering(ctx: LoweringRuleContext, x: IrValue, *, accuracy: Any = None) -> list[IrValue]:
    aval = array_aval(ctx.avals_in[0])
    log2 = _hlo.scalar_constant(ctx.caches, np.log(2), aval.dtype)
    log2 = _hlo.broadcast_in_dim(ctx.caches, log2, aval.shape, aval.dtype, ())
    scaled = _hlo.emit1("stablehlo.multiply", out_type(ctx), log2, x)
    return [_with_accuracy(ctx, "stablehlo.exponential", scaled, accuracy)]


@register(lax.logistic_p)
def _logistic_lowering(
    ctx: LoweringRuleContext, x: IrValue, *, accuracy: Any = None
) -> list[IrValue]:
    # XLA's logistic op has had numerical problems; JAX lowers 1 / (1 + exp(-x)) instead.
    aval = array_aval(ctx.avals_in[0])
    t = out_type(ctx)
    e = _hlo.emit1("stablehlo.exponential", t, _hlo.emit1("stablehlo.negate", t, x))
    one = _hlo.full(ctx.caches, 1, aval.shape, aval.dtype)
    denominator = _hlo.emit1("stablehlo.add", t, one, e)
    one = _hlo.full(ctx.caches, 1, aval.shape, aval.dtype)
    return [_hlo.emit1("stablehlo.divide", t, one, denominator)]


def _complex_sin_cos(ctx: LoweringRuleContext, x: IrValue, cosine: bool) -> IrValue:
    """sin or cos of a complex x from real parts; expm1 avoids cancellation for small imag."""
    caches = ctx.caches
    a, b = _hlo.real_part(x), _hlo.imag_part(x)
    real_t = a.type
    shape = array_aval(ctx.avals_in[0]).shape
    part = dtypes.finfo(array_aval(ctx.avals_in[0]).dtype).dtype

    def op(name: str, *args: IrValue) -> IrValue:
        return _hlo.emit1(name, real_t, *args)

    def const(v: float) -> IrValue:
        return _hlo.full(caches, v, shape, part)

    a_is_zero = _hlo.compare(caches, a, const(0), "EQ", "FLOAT")
    sn, cs = op("stablehlo.sine", a), op("stablehlo.cosine", a)
    e1m = op("stablehlo.exponential_minus_one", b)
    e2m = op("stablehlo.exponential_minus_one", op("stablehlo.negate", b))
    snh = op("stablehlo.divide", op("stablehlo.subtract", e1m, e2m), const(2))
    csh = op(
        "stablehlo.divide", op("stablehlo.add", op("stablehlo.add", e1m, e2m), const(2)), const(2)
    )
    t = out_type(ctx)
    if cosine:
        re = op("stablehlo.multiply", cs, csh)
        im = op("stablehlo.multiply", op("stablehlo.negate", sn), snh)
        at_zero = _hlo.emit1("stablehlo.complex", t, re, const(0))
    else:
        re = op("stablehlo.multiply", sn, csh)
        im = op("stablehlo.multiply", cs, snh)
        at_zero = _hlo.emit1("stablehlo.complex", t, const(0), im)
    general = _hlo.emit1("stablehlo.complex", t, re, im)
    return _hlo.select(a_is_zero, at_zero, general)


def _sin_cos(name: str, cosine: bool) -> Any:
    def rule(ctx: LoweringRuleContext, x: IrValue, *, accuracy: Any = None) -> list[IrValue]:
        if _hlo.kind(array_aval(ctx.avals_in[0]).dtype) == "c":
            return [_complex_sin_cos(ctx, x, cosine)]
        return [_with_accuracy(ctx, name, x, accuracy)]

    return rule


register(lax.sin_p)(_sin_cos("stablehlo.sine", cosine=False))
register(lax.cos_p)(_sin_cos("stablehlo.cosine", cosine=True))
single_op_rules[lax.sin_p] = ("stablehlo.sine", True)
single_op_rules[lax.cos_p] = ("stablehlo.cosine", True)
