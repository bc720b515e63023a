"""Elementwise `jnp` functions JAX composes from several primitives, most in a nested `jit`.

`where` (through `_where`), `clip`, `round`, `floor_divide`, `remainder` and their kin are
`jit`s in JAX 0.10.2 and here, with the same names, static arguments and bodies, so they print
alike. `logaddexp` and `logaddexp2` are `custom_jvp` functions with JAX's rules (defined in
`lax._logaddexp`, which `cumlogsumexp`'s derivative uses too). `power` with a static integer
exponent stages `integer_pow`, as in JAX.
"""

from __future__ import annotations

import operator
from functools import partial
from typing import Any

import numpy as np

import lamina_core.numpy as jnp
from lamina_core import lax as _lax
from lamina_core.ir import dtypes
from lamina_core.lax import _logaddexp2_custom, _logaddexp_custom
from lamina_core.numpy import _promote as p
from lamina_core.numpy import _ufuncs as u
from lamina_core.numpy._util import Array, ArrayLike, dtype_of, lax_const, shape_of
from lamina_core.trace import Tracer
from lamina_core.transforms import Jitted


def _where_body(condition: Any, x: Any, y: Any) -> Any:
    return _lax.where_body(condition, x, y)


# One `jit` for `jnp.where` and the reductions' `where=` masks, as JAX's `_where` is one
# function (its printer shares a sub-jaxpr by identity). It stages lax's drivers' body, but is
# a function of its own, as in JAX: jit's traces are keyed on the function, and JAX prints
# the two functions' sub-jaxprs apart.
_where_body.__name__ = _where_body.__qualname__ = "_where"
_where = Jitted(_where_body)


def where(
    condition: ArrayLike,
    x: ArrayLike = None,
    y: ArrayLike = None,
    /,
    *,
    size: int | None = None,
    fill_value: ArrayLike | tuple[ArrayLike, ...] | None = None,
) -> Any:
    """`x` where `condition` holds, else `y`, with promotion and broadcasting; with neither,
    `nonzero(condition, size=size, fill_value=fill_value)`, as JAX's."""
    if x is None and y is None:
        p.check_arraylike("where", condition)
        return jnp.nonzero(condition, size=size, fill_value=fill_value)
    # A missing x or y fails here, as None is not array-like (JAX's message too).
    p.check_arraylike("where", condition, x, y)
    if size is not None or fill_value is not None:
        raise ValueError(
            "size and fill_value arguments cannot be used in three-term where function."
        )
    return _where(condition, x, y)


@Jitted
def clip(arr: ArrayLike | None = None, /, min: ArrayLike = None, max: ArrayLike = None) -> Array:
    """`arr` limited below by `min` and above by `max` (either may be None)."""
    if arr is None:
        raise ValueError("No input was provided to the clip function.")
    p.check_arraylike("clip", arr)
    if any(t is not None and p.is_complex(t) for t in (arr, min, max)):
        raise ValueError(
            "Clip received a complex value either through the input or the min/max keywords. "
            "Complex values have no ordering and cannot be clipped. Please convert to a real "
            "value or array by taking the real or imaginary components via "
            "jax.numpy.real/imag respectively."
        )
    if min is not None:
        arr = u.maximum(min, arr)
    if max is not None:
        arr = u.minimum(max, arr)
    return p.asarray(arr)


@partial(Jitted, static_argnums=1, static_argnames="decimals")
def round(a: ArrayLike, decimals: int = 0, out: None = None) -> Array:
    """Round half to even, to `decimals` places."""
    p.check_arraylike("round", a)
    a = p.asarray(a)
    decimals = operator.index(decimals)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.round is not supported.")
    dtype = dtype_of(a)
    if p.kind(a) in "iu":
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return a

    def round_float(x: Array) -> Array:
        if decimals == 0:
            return _lax.round(x, _lax.RoundingMethod.TO_NEAREST_EVEN)
        # float16 would overflow 10**decimals too soon.
        x = _lax.convert_element_type(x, np.float32) if dtype == np.float16 else x
        factor = lax_const(x, 10**decimals)  # weak for a weak `x`, as JAX's `lax._const`
        scaled = _lax.round(_lax.mul(x, factor), _lax.RoundingMethod.TO_NEAREST_EVEN)
        rounded = _lax.div(scaled, factor)
        return _lax.convert_element_type(rounded, dtype) if dtype == np.float16 else rounded

    if decimals > np.log10(float(dtypes.finfo(dtype).max)):
        return a
    if p.is_complex(a):
        return _lax.complex(round_float(_lax.real(a)), round_float(_lax.imag(a)))
    return round_float(a)


def clip_method(self: Array, min: ArrayLike = None, max: ArrayLike = None) -> Array:
    """`x.clip(min, max)`: the bounds reach `clip` as keywords, so its jit sorts them."""
    return clip(self, min=min, max=max)


def round_method(self: Array, decimals: int = 0, out: None = None) -> Array:
    """`x.round(decimals)`: `decimals` reaches `round` as a keyword, as in JAX."""
    return round(self, decimals=decimals, out=out)


@partial(Jitted, static_argnums=1, static_argnames="decimals")
def around(a: ArrayLike, decimals: int = 0, out: None = None) -> Array:
    """`round` under its own name, as JAX stages it."""
    return round(a, decimals, out)


@Jitted
def rint(x: ArrayLike, /) -> Array:
    """Round half to even; integers and bools become the default float type."""
    p.check_arraylike("rint", x)
    x = p.asarray(x)
    if p.kind(x) in "biu":
        return _lax.convert_element_type(x, dtypes.canonicalize_dtype(dtypes.float64))
    if p.is_complex(x):
        return _lax.complex(rint(_lax.real(x)), rint(_lax.imag(x)))
    return _lax.round(x, _lax.RoundingMethod.TO_NEAREST_EVEN)


@Jitted
def trunc(x: ArrayLike) -> Array:
    """Round toward zero."""
    p.check_arraylike("trunc", x)
    x = p.asarray(x)
    if p.kind(x) in "biu":
        return x
    return where(_lax.lt(x, p.const(x, 0)), u.ceil(x), u.floor(x))


def _float_divmod(x1: Array, x2: Array) -> tuple[Array, Array]:
    mod = _lax.rem(x1, x2)
    x1_corrected = where(x2 == 0, x1, _lax.sub(x1, mod))
    quotient = _lax.div(x1_corrected, x2)
    # Move toward -inf where the C remainder has the opposite sign to the divisor.
    fix = _lax.bitwise_and(mod != 0, _lax.sign(x2) != _lax.sign(mod))
    mod = _lax.select(fix, mod + x2, mod)
    quotient = _lax.select(fix, quotient - 1.0, quotient)
    return _lax.round(quotient), mod


@Jitted
def floor_divide(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """x1 // x2, rounding toward -inf."""
    x1, x2 = p.promote_args_numeric("floor_divide", x1, x2)
    kind = p.kind(x1)
    if kind == "u":
        return _lax.div(x1, x2)
    if kind == "i":
        quotient = _lax.div(x1, x2)
        select = u.logical_and(_lax.sign(x1) != _lax.sign(x2), _lax.rem(x1, x2) != 0)
        return where(select, quotient - 1, quotient)
    if kind == "c":
        raise TypeError("floor_divide does not support complex-valued inputs")
    return _float_divmod(x1, x2)[0]


@Jitted
def remainder(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """x1 % x2 with the sign of the divisor (Python's %)."""
    x1, x2 = p.promote_args_numeric("remainder", x1, x2)
    zero = p.const(x1, 0)
    if p.kind(x2) in "iu":
        x2 = where(x2 == 0, p.full_like(x2, 1), x2)
    trunc_mod = _lax.rem(x1, x2)
    nonzero = _lax.ne(trunc_mod, zero)
    do_plus = _lax.bitwise_and(_lax.ne(_lax.lt(trunc_mod, zero), _lax.lt(x2, zero)), nonzero)
    return _lax.select(do_plus, _lax.add(trunc_mod, x2), trunc_mod)


@Jitted
def fmod(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """The C remainder: the sign of the dividend."""
    p.check_arraylike("fmod", x1, x2)
    x1, x2 = p.asarray(x1), p.asarray(x2)
    if dtypes.issubdtype(dtypes.result_type(x1, x2), np.integer):
        x2 = where(x2 == 0, p.full_like(x2, 1), x2)
    return _lax.rem(*p.promote_args_numeric("fmod", x1, x2))


@Jitted
def divmod(x1: ArrayLike, x2: ArrayLike, /) -> tuple[Array, Array]:
    """(x1 // x2, x1 % x2)."""
    x1, x2 = p.promote_args_numeric("divmod", x1, x2)
    if p.kind(x1) in "iu":
        return floor_divide(x1, x2), remainder(x1, x2)
    return _float_divmod(x1, x2)


def _static_exponent(x2: Any) -> int | None:
    if isinstance(x2, Tracer):
        return None
    try:
        return operator.index(x2)
    except TypeError:
        return None


def power(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """x1 ** x2; a static integer exponent stages `integer_pow`."""
    p.check_arraylike("power", x1, x2)
    p.check_no_float0s("power", x1, x2)
    exponent = _static_exponent(x2)
    if exponent is not None:
        (x1,) = p.promote_dtypes_numeric(x1)
        return _lax.integer_pow(x1, exponent)
    x1, x2 = p.promote_shapes("power", x1, x2)
    x1_, x2_ = p.promote_args_numeric("power", x1, x2)
    if p.kind(x1_) in "biu":
        return _pow_int_int(x1_, x2_)
    if p.kind(x1) in "fc" and p.kind(x2) in "iu":
        return _lax.pow(x1, x2)
    return _lax.pow(x1_, x2_)


def _pow_int_int(x1: Array, x2: Array) -> Array:
    # Square-and-multiply over the exponent's low 6 bits: larger exponents overflow anyway.
    zero, one = p.const(x2, 0), p.const(x2, 1)
    acc = where(_lax.bitwise_and(_lax.eq(x1, zero), _lax.ne(x2, zero)), zero, one)
    for _ in range(6):
        acc = where(_lax.bitwise_and(x2, one), _lax.mul(acc, x1), acc)
        x1 = _lax.mul(x1, x1)
        x2 = _lax.shift_right_logical(x2, one)
    return acc


@Jitted
def isinf(x: ArrayLike, /) -> Array:
    p.check_arraylike("isinf", x)
    x = p.asarray(x)
    if p.kind(x) == "f":
        return _lax.eq(_lax.abs(x), p.const(x, np.inf))
    if p.is_complex(x):
        re, im = _lax.real(x), _lax.imag(x)
        return _lax.bitwise_or(
            _lax.eq(_lax.abs(re), p.const(re, np.inf)), _lax.eq(_lax.abs(im), p.const(im, np.inf))
        )
    return p.full_like(x, False, dtype=np.bool_)


@Jitted
def signbit(x: ArrayLike, /) -> Array:
    """Whether the sign bit is set (true for -0.0)."""
    (x,) = p.promote_args("signbit", x)
    dtype = dtype_of(x)
    if p.kind(x) in "iu":
        return _lax.lt(x, p.const(x, 0))
    if p.kind(x) == "b":
        return p.full_like(x, False, dtype=np.bool_)
    if p.kind(x) != "f":
        raise ValueError(f"jax.numpy.signbit is not well defined for {dtype}")
    info = dtypes.finfo(dtype)
    if info.bits not in (16, 32, 64):
        raise NotImplementedError("jax.numpy.signbit only supports 16, 32, and 64-bit types.")
    bits = _lax.bitcast_convert_type(x, np.dtype(f"int{info.bits}"))
    return _lax.convert_element_type(bits >> info.nexp + info.nmant, np.bool_)


@Jitted
def copysign(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    x1, x2 = p.promote_args_inexact("copysign", x1, x2)
    if p.is_complex(x1):
        raise TypeError("copysign does not support complex-valued inputs")
    return where(u.astype(signbit(x2), np.bool_), -_lax.abs(x1), _lax.abs(x1))


@partial(Jitted, static_argnums=1, static_argnames="deg")
def angle(z: ArrayLike, deg: bool = False) -> Array:
    """The argument of complex `z` (in degrees if `deg`)."""
    p.check_arraylike("angle", z)
    z = p.asarray(z)
    re, im = u.real(z), u.imag(z)
    dtype = dtype_of(re)
    if p.kind(re) not in "fc" or (p.kind(z) == "f" and not shape_of(z)):
        dtype = dtypes.canonicalize_dtype(dtypes.float64)
        re = _lax.convert_element_type(re, dtype)
        im = _lax.convert_element_type(im, dtype)
    result = _lax.atan2(im, re)
    return u.rad2deg(result) if deg else result


@Jitted
def hypot(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """sqrt(x1**2 + x2**2) without overflow in the squares."""
    x1, x2 = p.promote_args_inexact("hypot", x1, x2)
    if p.is_complex(x1):
        raise ValueError(
            "jnp.hypot is not well defined for complex-valued inputs. Please convert to real "
            "values first, such as by using abs(x)"
        )
    x1, x2 = _lax.abs(x1), _lax.abs(x2)
    idx_inf = _lax.bitwise_or(u.isposinf(x1), u.isposinf(x2))
    x1, x2 = u.maximum(x1, x2), u.minimum(x1, x2)
    # The outer condition is staged first, as JAX evaluates it first.
    at_zero = x1 == 0
    ratio = _lax.div(x2, where(x1 == 0, p.full_like(x1, 1), x1))
    x = where(at_zero, x1, x1 * _lax.sqrt(1 + _lax.square(ratio)))
    return where(idx_inf, p.const(x, np.inf), x)


@Jitted
def heaviside(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """0 below zero, 1 above, `x2` at zero."""
    p.check_arraylike("heaviside", x1, x2)
    x1, x2 = p.promote_dtypes_inexact(x1, x2)
    zero = p.const(x1, 0)
    negative, positive, nan = _lax.lt(x1, zero), _lax.gt(x1, zero), _lax.ne(x1, x1)
    return where(negative, zero, where(positive, p.const(x1, 1), where(nan, x1, x2)))


@Jitted
def arccosh(x: ArrayLike, /) -> Array:
    result = _lax.acosh(*p.promote_args_inexact("arccosh", x))
    if p.is_complex(result):
        result = where(u.real(result) < 0, _lax.neg(result), result)
    return result


def logaddexp(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """log(exp(x1) + exp(x2)) without overflow, with JAX's custom derivative."""
    x1, x2 = p.promote_args_inexact("logaddexp", x1, x2)
    return _logaddexp_custom(x1, x2)


def logaddexp2(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """log2(2**x1 + 2**x2) without overflow, with JAX's custom derivative."""
    x1, x2 = p.promote_args_inexact("logaddexp2", x1, x2)
    return _logaddexp2_custom(x1, x2)


# `add`, `maximum`, ... are public as `_ufuncs_outwhere`'s wrappers (JAX's ufunc call).
__all__ = [
    "angle",
    "arccosh",
    "around",
    "clip",
    "copysign",
    "divmod",
    "floor_divide",
    "fmod",
    "heaviside",
    "hypot",
    "isinf",
    "power",
    "remainder",
    "rint",
    "round",
    "signbit",
    "trunc",
    "where",
]
