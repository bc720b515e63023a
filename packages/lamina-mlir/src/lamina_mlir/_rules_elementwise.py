"""Lowering of the elementwise arithmetic, rounding, bitwise and comparison primitives.

Most are one StableHLO op on operands broadcast to the output shape. The exceptions follow
JAX's lowering op for op: `sign` of unsigned integers is a select, `square` of integers a
multiply, `integer_pow` a chain of multiplies by repeated squaring, `conj` rebuilds the
complex value, `min`/`max` of complex values compare (real, imag) pairs, and comparisons
carry XLA's comparison type for the operand dtype (FLOAT, SIGNED, or UNSIGNED for unsigned
integers and bool).
"""

from __future__ import annotations

from typing import Any

from lamina_core import lax
from lamina_core.interpreters import add_any_p
from lamina_mlir import _hlo
from lamina_mlir._context import LoweringRuleContext, single_op_rules
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._rules_util import (
    array_aval,
    broadcast_operands,
    full_like,
    nary,
    out_aval,
    out_type,
    register,
    register_nary,
)

for _prim, _name in (
    (lax.neg_p, "stablehlo.negate"),
    (lax.floor_p, "stablehlo.floor"),
    (lax.ceil_p, "stablehlo.ceil"),
    (lax.is_finite_p, "stablehlo.is_finite"),
    (lax.abs_p, "stablehlo.abs"),
    (lax.not_p, "stablehlo.not"),
    (lax.real_p, "stablehlo.real"),
    (lax.imag_p, "stablehlo.imag"),
    (lax.population_count_p, "stablehlo.popcnt"),
    (lax.clz_p, "stablehlo.count_leading_zeros"),
    (lax.add_p, "stablehlo.add"),
    (add_any_p, "stablehlo.add"),
    (lax.sub_p, "stablehlo.subtract"),
    (lax.div_p, "stablehlo.divide"),
    (lax.rem_p, "stablehlo.remainder"),
    (lax.nextafter_p, "chlo.next_after"),
    (lax.and_p, "stablehlo.and"),
    (lax.or_p, "stablehlo.or"),
    (lax.xor_p, "stablehlo.xor"),
    (lax.shift_left_p, "stablehlo.shift_left"),
    (lax.shift_right_logical_p, "stablehlo.shift_right_logical"),
    (lax.shift_right_arithmetic_p, "stablehlo.shift_right_arithmetic"),
    (lax.complex_p, "stablehlo.complex"),
):
    register_nary(_prim, _name)


@register(lax.sign_p)
def _sign_lowering(ctx: LoweringRuleContext, x: IrValue) -> list[IrValue]:
    aval = array_aval(ctx.avals_in[0])
    if _hlo.kind(aval.dtype) == "u":
        # XLA's sign is for signed numbers; an unsigned one is 0 or 1.
        is_zero = _hlo.compare(ctx.caches, x, full_like(ctx, 0, aval), "EQ", "UNSIGNED")
        return [_hlo.select(is_zero, full_like(ctx, 0, aval), full_like(ctx, 1, aval))]
    return [_hlo.emit1("stablehlo.sign", out_type(ctx), x)]


@register(lax.round_p)
def _round_lowering(
    ctx: LoweringRuleContext, x: IrValue, *, rounding_method: lax.RoundingMethod
) -> list[IrValue]:
    if rounding_method == lax.RoundingMethod.AWAY_FROM_ZERO:
        return [_hlo.emit1("stablehlo.round_nearest_afz", out_type(ctx), x)]
    return [_hlo.emit1("stablehlo.round_nearest_even", out_type(ctx), x)]


@register(lax.square_p)
def _square_lowering(ctx: LoweringRuleContext, x: IrValue) -> list[IrValue]:
    if _hlo.kind(array_aval(ctx.avals_in[0]).dtype) in "iu":
        return [_hlo.emit1("stablehlo.multiply", out_type(ctx), x, x)]
    return [_hlo.emit1("chlo.square", out_type(ctx), x)]


@register(lax.integer_pow_p)
def _integer_pow_lowering(ctx: LoweringRuleContext, x: IrValue, *, y: int) -> list[IrValue]:
    t = out_type(ctx)
    aval = out_aval(ctx)

    def mul(a: IrValue, b: IrValue) -> IrValue:
        return _hlo.emit1("stablehlo.multiply", t, a, b)

    if y == 0:
        return [full_like(ctx, 1, aval)]
    if y == 3:  # JAX's shortcut, which multiplies in this order
        return [mul(mul(x, x), x)]
    power = abs(y)
    acc: IrValue | None = None
    while power:
        # The multiplication order of JAX's lowering, so that floats round alike.
        if power & 1:
            acc = x if acc is None else mul(acc, x)
        power >>= 1
        if power:
            x = mul(x, x)
    assert acc is not None
    if y < 0:
        acc = _hlo.emit1("stablehlo.divide", t, full_like(ctx, 1, aval), acc)
    return [acc]


@register(lax.conj_p)
def _conj_lowering(ctx: LoweringRuleContext, x: IrValue, **params: Any) -> list[IrValue]:
    aval = array_aval(ctx.avals_in[0])
    t = out_type(ctx)
    if _hlo.kind(aval.dtype) == "c":
        re = _hlo.real_part(x)
        im = _hlo.imag_part(x)
        neg_im = _hlo.emit1("stablehlo.negate", im.type, im)
        return [_hlo.emit1("stablehlo.complex", t, re, neg_im)]
    zeros = full_like(ctx, 0, aval)
    return [_hlo.emit1("stablehlo.complex", t, x, zeros)]


single_op_rules[lax.mul_p] = ("stablehlo.multiply", False)


@register(lax.mul_p)
def _mul_lowering(
    ctx: LoweringRuleContext, x: IrValue, y: IrValue, *, out_dtype: Any = None
) -> list[IrValue]:
    if out_dtype is None:
        return [nary(ctx, "stablehlo.multiply", x, y)]
    aval = out_aval(ctx)
    t = out_type(ctx)
    args = broadcast_operands(ctx, (x, y), ctx.avals_in, aval.shape)
    args = [_hlo.emit1("stablehlo.convert", t, a) for a in args]
    return [_hlo.emit1("stablehlo.multiply", t, *args)]


@register(lax.pow_p)
def _pow_lowering(ctx: LoweringRuleContext, x: IrValue, y: IrValue) -> list[IrValue]:
    x_aval, y_aval = (array_aval(a) for a in ctx.avals_in)
    if x_aval.dtype != y_aval.dtype:
        dtype = out_aval(ctx).dtype
        y = _hlo.convert(ctx.caches, y, y_aval.shape, dtype)
        ctx = ctx.replace(avals_in=[x_aval, y_aval.update(dtype=dtype)])
    return [nary(ctx, "stablehlo.power", x, y)]


def _min_max(name: str) -> Any:
    def rule(ctx: LoweringRuleContext, x: IrValue, y: IrValue) -> list[IrValue]:
        a, b = broadcast_operands(ctx, (x, y), ctx.avals_in, out_aval(ctx).shape)
        return [_hlo.min_or_max(ctx.caches, name, a, b)]

    return rule


register(lax.max_p)(_min_max("stablehlo.maximum"))
register(lax.min_p)(_min_max("stablehlo.minimum"))


def _comparison(direction: str) -> Any:
    def rule(ctx: LoweringRuleContext, x: IrValue, y: IrValue) -> list[IrValue]:
        a, b = broadcast_operands(ctx, (x, y), ctx.avals_in, out_aval(ctx).shape)
        kind = _hlo.compare_type(array_aval(ctx.avals_in[0]).dtype)
        return [_hlo.compare(ctx.caches, a, b, direction, kind)]

    return rule


for _prim, _direction in (
    (lax.eq_p, "EQ"),
    (lax.ne_p, "NE"),
    (lax.lt_p, "LT"),
    (lax.le_p, "LE"),
    (lax.gt_p, "GT"),
    (lax.ge_p, "GE"),
):
    register(_prim)(_comparison(_direction))
