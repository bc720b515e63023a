"""NumPy's and the array API's second names (`abs`, `acos`, `divide`, `amax`, ...).

Each is a function of its own, as in JAX, not the same object under two names: its name is what
`jit(jnp.abs)` stages and compiles (`jit[name=abs]`, `@jit_abs`), and some check their
arguments under their own name (`acos` of a string says "acos requires ..."). Where JAX's alias
is a `jit(inline=True)` it is dispatched as one program at top level; the others call their
target, whose dispatch runs.
"""

from __future__ import annotations

from lamina_core import lax as _lax
from lamina_core.numpy import _promote as p
from lamina_core.numpy._reductions import Axis
from lamina_core.numpy._reductions import max as _max
from lamina_core.numpy._reductions import min as _min
from lamina_core.numpy._ufuncs import (
    absolute,
    arccos,
    arcsin,
    arcsinh,
    arctan,
    arctanh,
    conjugate,
    deg2rad,
    rad2deg,
    right_shift,
    true_divide,
)
from lamina_core.numpy._ufuncs_composite import arccosh, power, remainder
from lamina_core.numpy._util import Array, ArrayLike
from lamina_core.trace import dispatched_at_top_level


@dispatched_at_top_level
def abs(x: ArrayLike, /) -> Array:
    return absolute(x)


@dispatched_at_top_level
def acos(x: ArrayLike, /) -> Array:
    return arccos(*p.promote_args("acos", x))


@dispatched_at_top_level
def acosh(x: ArrayLike, /) -> Array:
    return arccosh(*p.promote_args("acosh", x))


@dispatched_at_top_level
def asin(x: ArrayLike, /) -> Array:
    return arcsin(*p.promote_args("asin", x))


@dispatched_at_top_level
def asinh(x: ArrayLike, /) -> Array:
    return arcsinh(*p.promote_args("asinh", x))


@dispatched_at_top_level
def atan(x: ArrayLike, /) -> Array:
    return arctan(*p.promote_args("atan", x))


@dispatched_at_top_level
def atanh(x: ArrayLike, /) -> Array:
    return arctanh(*p.promote_args("atanh", x))


@dispatched_at_top_level
def bitwise_invert(x: ArrayLike, /) -> Array:
    return _lax.bitwise_not(*p.promote_args("bitwise_invert", x))


@dispatched_at_top_level
def invert(x: ArrayLike, /) -> Array:
    return _lax.bitwise_not(*p.promote_args("invert", x))


@dispatched_at_top_level
def bitwise_left_shift(x: ArrayLike, y: ArrayLike, /) -> Array:
    return _lax.shift_left(*p.promote_args_numeric("bitwise_left_shift", x, y))


@dispatched_at_top_level
def bitwise_right_shift(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    return right_shift(x1, x2)


def conj(x: ArrayLike, /) -> Array:
    return conjugate(x)


def degrees(x: ArrayLike, /) -> Array:
    return rad2deg(x)


def radians(x: ArrayLike, /) -> Array:
    return deg2rad(x)


def divide(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    return true_divide(x1, x2)


def mod(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    return remainder(x1, x2)


def pow(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    return power(x1, x2)


def amax(
    a: ArrayLike,
    axis: Axis = None,
    out: None = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike | None = None,
) -> Array:
    """Alias of `max`."""
    return _max(a, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)


def amin(
    a: ArrayLike,
    axis: Axis = None,
    out: None = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike | None = None,
) -> Array:
    """Alias of `min`."""
    return _min(a, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)


__all__ = [
    "abs",
    "acos",
    "acosh",
    "amax",
    "amin",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "conj",
    "degrees",
    "divide",
    "invert",
    "mod",
    "pow",
    "radians",
]
