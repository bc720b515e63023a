"""Elementwise `jnp` functions that JAX stages inline: promotion, then one or a few primitives.

Each function promotes its arguments as its `jax.numpy` namesake does (`promote_args`,
`..._inexact` for transcendental functions, `..._numeric` for shifts and `square`) and binds
the same primitives in the same order, so the jaxprs print alike. The functions JAX stages as
nested `jit`s, or with custom derivatives, are in `_ufuncs_composite`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lamina_core import lax as _lax
from lamina_core.ir import dtypes
from lamina_core.lax import _convert_element_type
from lamina_core.numpy import _promote as p
from lamina_core.numpy._util import Array, ArrayLike, DTypeLike, dtype_of
from lamina_core.trace import dispatched_at_top_level

_Unary = Callable[[ArrayLike], Array]
_Binary = Callable[[ArrayLike, ArrayLike], Array]


def _named(fn: Any, name: str, doc: str) -> Any:
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return dispatched_at_top_level(fn)


def _inexact_unary(lax_fn: Callable[[Array], Array], name: str) -> _Unary:
    def fn(x: ArrayLike, /) -> Array:
        return lax_fn(*p.promote_args_inexact(name, x))

    return _named(fn, name, f"Elementwise `{name}`; integers and bools become floats first.")  # type: ignore[no-any-return]  # a function


def _inexact_binary(lax_fn: Callable[[Array, Array], Array], name: str) -> _Binary:
    def fn(x: ArrayLike, y: ArrayLike, /) -> Array:
        return lax_fn(*p.promote_args_inexact(name, x, y))

    return _named(fn, name, f"Elementwise `{name}` of floats, with promotion and broadcasting.")  # type: ignore[no-any-return]  # a function


def _binary(lax_fn: Callable[[Array, Array], Array], name: str) -> _Binary:
    def fn(x: ArrayLike, y: ArrayLike, /) -> Array:
        return lax_fn(*p.promote_args(name, x, y))

    return _named(fn, name, f"Elementwise `{name}` with NumPy promotion and broadcasting.")  # type: ignore[no-any-return]  # a function


exp = _inexact_unary(_lax.exp, "exp")
exp2 = _inexact_unary(_lax.exp2, "exp2")
expm1 = _inexact_unary(_lax.expm1, "expm1")
log = _inexact_unary(_lax.log, "log")
log1p = _inexact_unary(_lax.log1p, "log1p")
sqrt = _inexact_unary(_lax.sqrt, "sqrt")
cbrt = _inexact_unary(_lax.cbrt, "cbrt")
sin = _inexact_unary(_lax.sin, "sin")
cos = _inexact_unary(_lax.cos, "cos")
tan = _inexact_unary(_lax.tan, "tan")
arcsin = _inexact_unary(_lax.asin, "arcsin")
arccos = _inexact_unary(_lax.acos, "arccos")
arctan = _inexact_unary(_lax.atan, "arctan")
sinh = _inexact_unary(_lax.sinh, "sinh")
cosh = _inexact_unary(_lax.cosh, "cosh")
tanh = _inexact_unary(_lax.tanh, "tanh")
arcsinh = _inexact_unary(_lax.asinh, "arcsinh")
arctanh = _inexact_unary(_lax.atanh, "arctanh")

float_power = _inexact_binary(_lax.pow, "float_power")
nextafter = _inexact_binary(_lax.nextafter, "nextafter")


@dispatched_at_top_level
def arctan2(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Elementwise `arctan2` of floats, with promotion and broadcasting."""
    return _lax.atan2(*p.promote_args_inexact("arctan2", x1, x2))


@dispatched_at_top_level
def true_divide(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Elementwise `true_divide` of floats, with promotion and broadcasting."""
    return _lax.div(*p.promote_args_inexact("true_divide", x1, x2))


subtract = _binary(_lax.sub, "subtract")
maximum = _binary(_lax.max, "maximum")
minimum = _binary(_lax.min, "minimum")
equal = _binary(_lax.eq, "equal")
not_equal = _binary(_lax.ne, "not_equal")
bitwise_and = _binary(_lax.bitwise_and, "bitwise_and")
bitwise_or = _binary(_lax.bitwise_or, "bitwise_or")
bitwise_xor = _binary(_lax.bitwise_xor, "bitwise_xor")


@dispatched_at_top_level
def atan2(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """The array-API spelling of `arctan2`, which (as in JAX) promotes in two steps."""
    return arctan2(*p.promote_args("atan2", x1, x2))


@dispatched_at_top_level
def add(x: ArrayLike, y: ArrayLike, /) -> Array:
    """x + y; for bools, logical or."""
    x, y = p.promote_args("add", x, y)
    return _lax.bitwise_or(x, y) if dtype_of(x) == np.bool_ else _lax.add(x, y)


@dispatched_at_top_level
def multiply(x: ArrayLike, y: ArrayLike, /) -> Array:
    """x * y; for bools, logical and."""
    x, y = p.promote_args("multiply", x, y)
    return _lax.bitwise_and(x, y) if dtype_of(x) == np.bool_ else _lax.mul(x, y)


def _ordered(lax_fn: Callable[[Array, Array], Array], name: str) -> _Binary:
    def fn(x: ArrayLike, y: ArrayLike, /) -> Array:
        x, y = p.promote_args(name, x, y)
        if not p.is_complex(x):
            return lax_fn(x, y)
        # Complex numbers order lexicographically: real parts, then imaginary parts.
        return _lax.select(
            _lax.eq(real(x), real(y)), lax_fn(imag(x), imag(y)), lax_fn(real(x), real(y))
        )

    return _named(fn, name, f"Elementwise `{name}`; complex values compare lexicographically.")  # type: ignore[no-any-return]  # a function


less = _ordered(_lax.lt, "less")
less_equal = _ordered(_lax.le, "less_equal")
greater = _ordered(_lax.gt, "greater")
greater_equal = _ordered(_lax.ge, "greater_equal")


@dispatched_at_top_level
def left_shift(x: ArrayLike, y: ArrayLike, /) -> Array:
    return _lax.shift_left(*p.promote_args_numeric("left_shift", x, y))


@dispatched_at_top_level
def right_shift(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Arithmetic shift for signed integers, logical for unsigned ones."""
    x, y = p.promote_args_numeric("right_shift", x1, x2)
    if p.kind(x) == "u":
        return _lax.shift_right_logical(x, y)
    return _lax.shift_right_arithmetic(x, y)


def _to_bool(x: Array) -> Array:
    return x if dtype_of(x) == np.bool_ else _lax.ne(x, p.const(x, 0))


def _logical(lax_fn: Callable[[Array, Array], Array], name: str) -> _Binary:
    def fn(x: ArrayLike, y: ArrayLike, /) -> Array:
        x, y = p.promote_args(name, x, y)
        return lax_fn(_to_bool(x), _to_bool(y))

    return _named(fn, name, f"Elementwise `{name}` of truth values.")  # type: ignore[no-any-return]  # a function


logical_and = _logical(_lax.bitwise_and, "logical_and")
logical_or = _logical(_lax.bitwise_or, "logical_or")
logical_xor = _logical(_lax.bitwise_xor, "logical_xor")


@dispatched_at_top_level
def logical_not(x: ArrayLike, /) -> Array:
    return _lax.bitwise_not(_to_bool(*p.promote_args("logical_not", x)))


@dispatched_at_top_level
def bitwise_not(x: ArrayLike, /) -> Array:
    return _lax.bitwise_not(*p.promote_args("bitwise_not", x))


@dispatched_at_top_level
def negative(x: ArrayLike, /) -> Array:
    return _lax.neg(*p.promote_args("negative", x))


@dispatched_at_top_level
def positive(x: ArrayLike, /) -> Array:
    return p.promote_args("positive", x)[0]


@dispatched_at_top_level
def sign(x: ArrayLike, /) -> Array:
    return _lax.sign(*p.promote_args("sign", x))


@dispatched_at_top_level
def floor(x: ArrayLike, /) -> Array:
    p.check_arraylike("floor", x)
    if p.kind(x) in "biu":
        return p.asarray(x)
    return _lax.floor(*p.promote_args_inexact("floor", x))


@dispatched_at_top_level
def ceil(x: ArrayLike, /) -> Array:
    p.check_arraylike("ceil", x)
    if p.kind(x) in "biu":
        return p.asarray(x)
    return _lax.ceil(*p.promote_args_inexact("ceil", x))


@dispatched_at_top_level
def absolute(x: ArrayLike, /) -> Array:
    """|x|; bools and unsigned integers are their own absolute values."""
    p.check_arraylike("absolute", x)
    x = p.asarray(x)
    return x if p.kind(x) in "bu" else _lax.abs(x)


@dispatched_at_top_level
def fabs(x: ArrayLike, /) -> Array:
    """|x| as a float."""
    p.check_arraylike("fabs", x)
    if p.is_complex(x):
        raise TypeError("ufunc 'fabs' does not support complex dtypes")
    return _lax.abs(*p.promote_args_inexact("fabs", x))


@dispatched_at_top_level
def square(x: ArrayLike, /) -> Array:
    p.check_arraylike("square", x)
    return _lax.square(*p.promote_dtypes_numeric(x))


@dispatched_at_top_level
def reciprocal(x: ArrayLike, /) -> Array:
    p.check_arraylike("reciprocal", x)
    (x,) = p.promote_dtypes_inexact(x)
    return _lax.integer_pow(x, -1)


@dispatched_at_top_level
def log2(x: ArrayLike, /) -> Array:
    (x,) = p.promote_args_inexact("log2", x)
    if p.is_complex(x):
        r = _lax.log(x)
        re, im = _lax.real(r), _lax.imag(r)
        ln2 = _lax.log(p.const(re, 2))
        return _lax.complex(_lax.div(re, ln2), _lax.div(im, ln2))
    return _lax.div(_lax.log(x), _lax.log(p.const(x, 2)))


@dispatched_at_top_level
def log10(x: ArrayLike, /) -> Array:
    (x,) = p.promote_args_inexact("log10", x)
    inverse_ln10 = np.array(0.4342944819032518, dtypes.finfo(dtype_of(x)).dtype)
    if p.is_complex(x):
        r = _lax.log(x)
        re, im = _lax.real(r), _lax.imag(r)
        return _lax.complex(_lax.mul(re, inverse_ln10), _lax.mul(im, inverse_ln10))
    return _lax.mul(_lax.log(x), inverse_ln10)


@dispatched_at_top_level
def deg2rad(x: ArrayLike, /) -> Array:
    (x,) = p.promote_args_inexact("deg2rad", x)
    return _lax.mul(x, p.const(x, np.pi / 180))


@dispatched_at_top_level
def rad2deg(x: ArrayLike, /) -> Array:
    (x,) = p.promote_args_inexact("rad2deg", x)
    return _lax.mul(x, p.const(x, 180 / np.pi))


@dispatched_at_top_level
def real(val: ArrayLike, /) -> Array:
    p.check_arraylike("real", val)
    return _lax.real(val) if p.is_complex(val) else p.asarray(val)


@dispatched_at_top_level
def imag(val: ArrayLike, /) -> Array:
    p.check_arraylike("imag", val)
    return _lax.imag(val) if p.is_complex(val) else p.full_like(val, 0)


@dispatched_at_top_level
def conjugate(x: ArrayLike, /) -> Array:
    p.check_arraylike("conjugate", x)
    return _lax.conj(x) if p.is_complex(x) else p.asarray(x)


@dispatched_at_top_level
def isnan(x: ArrayLike, /) -> Array:
    p.check_arraylike("isnan", x)
    return _lax.ne(x, x)


@dispatched_at_top_level
def isfinite(x: ArrayLike, /) -> Array:
    p.check_arraylike("isfinite", x)
    if p.kind(x) == "f":
        return _lax.is_finite(x)
    if p.is_complex(x):
        return _lax.bitwise_and(_lax.is_finite(real(x)), _lax.is_finite(imag(x)))
    return p.full_like(x, True, dtype=np.bool_)


def _isposneginf(infinity: float, x: ArrayLike, name: str) -> Array:
    p.check_arraylike(name, x)
    if p.kind(x) == "f":
        return _lax.eq(x, p.const(x, infinity))
    if p.is_complex(x):
        raise ValueError("isposinf/isneginf are not well defined for complex types")
    return p.full_like(x, False, dtype=np.bool_)


@dispatched_at_top_level
def _isposinf(x: ArrayLike, /) -> Array:
    return _isposneginf(np.inf, x, "isposinf")


@dispatched_at_top_level
def _isneginf(x: ArrayLike, /) -> Array:
    return _isposneginf(-np.inf, x, "isneginf")


def _no_out(name: str, x: ArrayLike, out: None) -> None:
    p.check_arraylike(name, x)
    if out is not None:
        raise NotImplementedError("The 'out' argument to isneginf/isposinf is not supported.")


def isposinf(x: ArrayLike, /, out: None = None) -> Array:
    """Whether each element is +inf (False for integers; complex values are refused)."""
    _no_out("isposinf", x, out)
    return _isposinf(x)


def isneginf(x: ArrayLike, /, out: None = None) -> Array:
    """Whether each element is -inf (False for integers; complex values are refused)."""
    _no_out("isneginf", x, out)
    return _isneginf(x)


def astype(x: ArrayLike, dtype: DTypeLike | None, /, *, copy: bool = False) -> Array:
    """`x` converted to `dtype` (default: the default float type)."""
    p.check_arraylike("astype", x)
    new_dtype = dtypes.canonicalize_dtype(dtypes.float64 if dtype is None else dtype)
    if p.is_complex(x) and new_dtype == np.bool_:
        x = _lax.ne(x, p.const(x, 0))
    if isinstance(x, np.ndarray) and x.ndim:
        return p.convert(x, new_dtype, False)
    return _convert_element_type(x, new_dtype, False)


# `add`, `maximum`, ... are public as `_ufuncs_outwhere`'s wrappers (JAX's ufunc call).
__all__ = [
    "absolute",
    "arccos",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "astype",
    "atan2",
    "bitwise_not",
    "cbrt",
    "ceil",
    "conjugate",
    "cos",
    "cosh",
    "deg2rad",
    "equal",
    "exp",
    "exp2",
    "expm1",
    "fabs",
    "float_power",
    "floor",
    "greater",
    "greater_equal",
    "imag",
    "isfinite",
    "isnan",
    "isneginf",
    "isposinf",
    "left_shift",
    "less",
    "less_equal",
    "log",
    "log1p",
    "log2",
    "log10",
    "logical_not",
    "nextafter",
    "not_equal",
    "positive",
    "rad2deg",
    "real",
    "reciprocal",
    "right_shift",
    "sign",
    "sin",
    "sinh",
    "sqrt",
    "square",
    "tan",
    "tanh",
    "true_divide",
]
