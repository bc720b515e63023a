"""Elementwise functions with NumPy promotion and broadcasting."""

from __future__ import annotations

from typing import Any

from lamina_core import lax as _lax
from lamina_core.numpy._creation import asarray
from lamina_core.numpy._util import (
    Array,
    ArrayLike,
    promote_args,
    promote_args_inexact,
    promote_dtypes,
    promote_dtypes_inexact,
)


def _unary_inexact(lax_fn: Any, name: str) -> Any:
    def fn(x: ArrayLike, /) -> Array:
        (x,) = promote_dtypes_inexact(x)
        return lax_fn(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise `{name}`, as `jax.numpy.{name}`."
    return fn


sin = _unary_inexact(_lax.sin, "sin")
cos = _unary_inexact(_lax.cos, "cos")
tan = _unary_inexact(_lax.tan, "tan")
exp = _unary_inexact(_lax.exp, "exp")
exp2 = _unary_inexact(_lax.exp2, "exp2")
log = _unary_inexact(_lax.log, "log")
log1p = _unary_inexact(_lax.log1p, "log1p")
expm1 = _unary_inexact(_lax.expm1, "expm1")
tanh = _unary_inexact(_lax.tanh, "tanh")
sqrt = _unary_inexact(_lax.sqrt, "sqrt")


def negative(x: ArrayLike, /) -> Array:
    (x,) = promote_dtypes(x)
    return _lax.neg(x)


def positive(x: ArrayLike, /) -> Array:
    return asarray(x)


def _binary(lax_fn: Any, name: str) -> Any:
    def fn(x: ArrayLike, y: ArrayLike, /) -> Array:
        x, y = promote_args(name, x, y)
        return lax_fn(x, y)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise `{name}` with NumPy promotion and broadcasting."
    return fn


add = _binary(_lax.add, "add")
subtract = _binary(_lax.sub, "subtract")
multiply = _binary(_lax.mul, "multiply")
maximum = _binary(_lax.max, "maximum")
minimum = _binary(_lax.min, "minimum")
equal = _binary(_lax.eq, "equal")
not_equal = _binary(_lax.ne, "not_equal")
less = _binary(_lax.lt, "less")
less_equal = _binary(_lax.le, "less_equal")
greater = _binary(_lax.gt, "greater")
greater_equal = _binary(_lax.ge, "greater_equal")
bitwise_and = _binary(_lax.bitwise_and, "bitwise_and")
bitwise_or = _binary(_lax.bitwise_or, "bitwise_or")
bitwise_xor = _binary(_lax.bitwise_xor, "bitwise_xor")


def true_divide(x: ArrayLike, y: ArrayLike, /) -> Array:
    x, y = promote_args_inexact("true_divide", x, y)
    return _lax.div(x, y)


divide = true_divide


__all__ = [
    "add",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "cos",
    "divide",
    "equal",
    "exp",
    "exp2",
    "expm1",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "log",
    "log1p",
    "maximum",
    "minimum",
    "multiply",
    "negative",
    "not_equal",
    "positive",
    "sin",
    "sqrt",
    "subtract",
    "tan",
    "tanh",
    "true_divide",
]
