"""Elementwise primitives: unary and binary arithmetic, transcendental and comparison ops.

Each primitive is made by one of two factories from its name, the dtype kinds it accepts and
its NumPy reference. Binary ops take equal dtypes and broadcast size-1 dims and rank-0
operands; the result is weakly typed only when every operand is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import numpy as np

from lamina_core.avals import AbstractValue, ShapedArray
from lamina_core.lax import _checks as c
from lamina_core.lax._types import Array
from lamina_core.pretty import hide_params
from lamina_core.primitive import Primitive
from lamina_core.rules import abstract_eval_rules, impl_rules

# Ops JAX gives an `accuracy` param (hidden when None).
_WITH_ACCURACY: Final = frozenset(
    {
        "exp",
        "exp2",
        "log",
        "expm1",
        "log1p",
        "tanh",
        "logistic",
        "sin",
        "cos",
        "tan",
        "sqrt",
        "rsqrt",
        "cbrt",
    }
)


def unary(
    name: str,
    accepted: frozenset[str],
    reference: Callable[..., Any],
    *,
    out_dtype: Callable[[np.dtype], np.dtype] | None = None,
) -> Primitive:
    prim = Primitive(name)

    def abstract_eval(x: AbstractValue, **params: Any) -> ShapedArray:
        aval = c.array_aval(name, x)
        c.check_dtype(name, aval, accepted)
        if out_dtype is None:
            return aval  # avals are immutable values: share, don't rebuild
        return ShapedArray(aval.shape, out_dtype(aval.dtype), aval.weak_type)

    def impl(x: np.ndarray, **params: Any) -> Any:
        return reference(x)

    abstract_eval_rules.set(prim, abstract_eval)
    impl_rules.set(prim, impl)
    if name in _WITH_ACCURACY:
        hide_params(prim, lambda k, v: k == "accuracy" and v is None)
    return prim


def binary(
    name: str,
    accepted: frozenset[str],
    reference: Callable[..., Any],
    *,
    result_dtype: np.dtype | None = None,
) -> Primitive:
    prim = Primitive(name)

    def abstract_eval(x: AbstractValue, y: AbstractValue, **params: Any) -> ShapedArray:
        avals = [c.array_aval(name, x), c.array_aval(name, y)]
        dtype = c.check_same_dtypes(name, avals)
        for aval in avals:
            c.check_dtype(name, aval, accepted)
        shape = c.broadcast_shapes(name, avals)
        weak = all(a.weak_type for a in avals)
        if result_dtype is not None:
            return ShapedArray(shape, result_dtype, False)
        for aval in avals:  # share an operand's aval when it is the result type
            if aval.shape == shape and aval.weak_type == weak:
                return aval
        return ShapedArray(shape, dtype, weak)

    def impl(x: np.ndarray, y: np.ndarray, **params: Any) -> Any:
        return reference(x, y)

    abstract_eval_rules.set(prim, abstract_eval)
    impl_rules.set(prim, impl)
    return prim


def _logistic(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))  # type: ignore[no-any-return]  # NumPy ufunc arithmetic


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return 1 / np.sqrt(x)  # type: ignore[no-any-return]  # NumPy ufunc arithmetic


def _div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if np.result_type(x).kind in "iu":
        # XLA's integer division rounds toward zero; NumPy's floors.
        q = np.trunc(np.true_divide(x, np.where(y == 0, 1, y)))
        return q.astype(np.result_type(x))  # type: ignore[no-any-return]  # NumPy
    return np.true_divide(x, y)  # type: ignore[no-any-return]  # NumPy


def _rem(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.fmod(x, y)  # type: ignore[no-any-return]  # C remainder: sign of the dividend


def _abs_dtype(dtype: np.dtype) -> np.dtype:
    return (
        np.dtype(np.float32 if dtype == np.complex64 else np.float64)
        if dtype.kind == "c"
        else dtype
    )


neg_p: Final = unary("neg", c.NUM, np.negative)
sign_p: Final = unary("sign", c.NUM, np.sign)
floor_p: Final = unary("floor", c.FLOAT, np.floor)
ceil_p: Final = unary("ceil", c.FLOAT, np.ceil)
is_finite_p: Final = unary("is_finite", c.FLOAT, np.isfinite, out_dtype=lambda _: np.dtype(bool))
exp_p: Final = unary("exp", c.INEXACT, np.exp)
exp2_p: Final = unary("exp2", c.INEXACT, np.exp2)
log_p: Final = unary("log", c.INEXACT, np.log)
log1p_p: Final = unary("log1p", c.INEXACT, np.log1p)
expm1_p: Final = unary("expm1", c.INEXACT, np.expm1)
tanh_p: Final = unary("tanh", c.INEXACT, np.tanh)
logistic_p: Final = unary("logistic", c.INEXACT, _logistic)
sin_p: Final = unary("sin", c.INEXACT, np.sin)
cos_p: Final = unary("cos", c.INEXACT, np.cos)
tan_p: Final = unary("tan", c.INEXACT, np.tan)
sqrt_p: Final = unary("sqrt", c.INEXACT, np.sqrt)
rsqrt_p: Final = unary("rsqrt", c.INEXACT, _rsqrt)
cbrt_p: Final = unary("cbrt", c.FLOAT, np.cbrt)
abs_p: Final = unary("abs", c.SIGNED | c.INEXACT, np.abs, out_dtype=_abs_dtype)
not_p: Final = unary("not", c.BOOL | c.INT, np.invert)

add_p: Final = binary("add", c.NUM, np.add)
sub_p: Final = binary("sub", c.NUM, np.subtract)
mul_p: Final = binary("mul", c.NUM, np.multiply)
div_p: Final = binary("div", c.NUM, _div)
rem_p: Final = binary("rem", c.NUM, _rem)
pow_p: Final = binary("pow", c.INEXACT, np.power)
max_p: Final = binary("max", c.ANY, np.maximum)
min_p: Final = binary("min", c.ANY, np.minimum)
atan2_p: Final = binary("atan2", c.FLOAT, np.arctan2)
and_p: Final = binary("and", c.BOOL | c.INT, np.bitwise_and)
or_p: Final = binary("or", c.BOOL | c.INT, np.bitwise_or)
xor_p: Final = binary("xor", c.BOOL | c.INT, np.bitwise_xor)

_BOOL: Final = np.dtype(bool)
eq_p: Final = binary("eq", c.ANY, np.equal, result_dtype=_BOOL)
ne_p: Final = binary("ne", c.ANY, np.not_equal, result_dtype=_BOOL)
lt_p: Final = binary("lt", c.ORDERED, np.less, result_dtype=_BOOL)
le_p: Final = binary("le", c.ORDERED, np.less_equal, result_dtype=_BOOL)
gt_p: Final = binary("gt", c.ORDERED, np.greater, result_dtype=_BOOL)
ge_p: Final = binary("ge", c.ORDERED, np.greater_equal, result_dtype=_BOOL)

hide_params(mul_p, lambda k, v: k == "out_dtype" and v is None)


def neg(x: Array) -> Array:
    return neg_p.bind(x)


def sign(x: Array) -> Array:
    return sign_p.bind(x)


def floor(x: Array) -> Array:
    return floor_p.bind(x)


def ceil(x: Array) -> Array:
    return ceil_p.bind(x)


def is_finite(x: Array) -> Array:
    return is_finite_p.bind(x)


def abs(x: Array) -> Array:
    return abs_p.bind(x)


def bitwise_not(x: Array) -> Array:
    return not_p.bind(x)


def exp(x: Array, accuracy: Any = None) -> Array:
    return exp_p.bind(x, accuracy=accuracy)


def exp2(x: Array, accuracy: Any = None) -> Array:
    return exp2_p.bind(x, accuracy=accuracy)


def log(x: Array, accuracy: Any = None) -> Array:
    return log_p.bind(x, accuracy=accuracy)


def log1p(x: Array, accuracy: Any = None) -> Array:
    return log1p_p.bind(x, accuracy=accuracy)


def expm1(x: Array, accuracy: Any = None) -> Array:
    return expm1_p.bind(x, accuracy=accuracy)


def tanh(x: Array, accuracy: Any = None) -> Array:
    return tanh_p.bind(x, accuracy=accuracy)


def logistic(x: Array, accuracy: Any = None) -> Array:
    return logistic_p.bind(x, accuracy=accuracy)


def sin(x: Array, accuracy: Any = None) -> Array:
    return sin_p.bind(x, accuracy=accuracy)


def cos(x: Array, accuracy: Any = None) -> Array:
    return cos_p.bind(x, accuracy=accuracy)


def tan(x: Array, accuracy: Any = None) -> Array:
    return tan_p.bind(x, accuracy=accuracy)


def sqrt(x: Array, accuracy: Any = None) -> Array:
    return sqrt_p.bind(x, accuracy=accuracy)


def rsqrt(x: Array, accuracy: Any = None) -> Array:
    return rsqrt_p.bind(x, accuracy=accuracy)


def cbrt(x: Array, accuracy: Any = None) -> Array:
    return cbrt_p.bind(x, accuracy=accuracy)


def add(x: Array, y: Array) -> Array:
    return add_p.bind(x, y)


def sub(x: Array, y: Array) -> Array:
    return sub_p.bind(x, y)


def mul(x: Array, y: Array) -> Array:
    return mul_p.bind(x, y, out_dtype=None)


def div(x: Array, y: Array) -> Array:
    return div_p.bind(x, y)


def rem(x: Array, y: Array) -> Array:
    return rem_p.bind(x, y)


def pow(x: Array, y: Array) -> Array:
    return pow_p.bind(x, y)


def max(x: Array, y: Array) -> Array:
    return max_p.bind(x, y)


def min(x: Array, y: Array) -> Array:
    return min_p.bind(x, y)


def atan2(x: Array, y: Array) -> Array:
    return atan2_p.bind(x, y)


def bitwise_and(x: Array, y: Array) -> Array:
    return and_p.bind(x, y)


def bitwise_or(x: Array, y: Array) -> Array:
    return or_p.bind(x, y)


def bitwise_xor(x: Array, y: Array) -> Array:
    return xor_p.bind(x, y)


def eq(x: Array, y: Array) -> Array:
    return eq_p.bind(x, y)


def ne(x: Array, y: Array) -> Array:
    return ne_p.bind(x, y)


def lt(x: Array, y: Array) -> Array:
    return lt_p.bind(x, y)


def le(x: Array, y: Array) -> Array:
    return le_p.bind(x, y)


def gt(x: Array, y: Array) -> Array:
    return gt_p.bind(x, y)


def ge(x: Array, y: Array) -> Array:
    return ge_p.bind(x, y)


__all__ = [
    "abs",
    "abs_p",
    "add",
    "add_p",
    "and_p",
    "atan2",
    "atan2_p",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "cbrt",
    "cbrt_p",
    "ceil",
    "ceil_p",
    "cos",
    "cos_p",
    "div",
    "div_p",
    "eq",
    "eq_p",
    "exp",
    "exp2",
    "exp2_p",
    "exp_p",
    "expm1",
    "expm1_p",
    "floor",
    "floor_p",
    "ge",
    "ge_p",
    "gt",
    "gt_p",
    "is_finite",
    "is_finite_p",
    "le",
    "le_p",
    "log",
    "log1p",
    "log1p_p",
    "log_p",
    "logistic",
    "logistic_p",
    "lt",
    "lt_p",
    "max",
    "max_p",
    "min",
    "min_p",
    "mul",
    "mul_p",
    "ne",
    "ne_p",
    "neg",
    "neg_p",
    "not_p",
    "or_p",
    "pow",
    "pow_p",
    "rem",
    "rem_p",
    "rsqrt",
    "rsqrt_p",
    "sign",
    "sign_p",
    "sin",
    "sin_p",
    "sqrt",
    "sqrt_p",
    "sub",
    "sub_p",
    "tan",
    "tan_p",
    "tanh",
    "tanh_p",
    "xor_p",
]
