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
    }  # fmt: skip
)


def unary(name: str, accepted: frozenset[str], reference: Callable[..., Any], *,
          out_dtype: Callable[[np.dtype], np.dtype] | None = None) -> Primitive:  # fmt: skip
    prim = Primitive(name)

    def abstract_eval(x: AbstractValue, **params: Any) -> ShapedArray:
        aval = c.array_aval(name, x)
        c.check_dtype(name, aval, accepted)
        dtype = aval.dtype if out_dtype is None else out_dtype(aval.dtype)
        return ShapedArray(aval.shape, dtype, aval.weak_type)

    def impl(x: np.ndarray, **params: Any) -> Any:
        return reference(x)

    abstract_eval_rules.set(prim, abstract_eval)
    impl_rules.set(prim, impl)
    if name in _WITH_ACCURACY:
        hide_params(prim, lambda k, v: k == "accuracy" and v is None)
    return prim


def binary(name: str, accepted: frozenset[str], reference: Callable[..., Any], *,
           result_dtype: np.dtype | None = None) -> Primitive:  # fmt: skip
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
