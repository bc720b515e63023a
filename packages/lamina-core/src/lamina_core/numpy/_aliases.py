"""NumPy's and the array API's second names (`abs`, `acos`, `divide`, `amax`, ...).

Each is a function of its own, as in JAX, not the same object under two names: its name is what
`jit(jnp.abs)` stages and compiles (`jit[name=abs]`, `@jit_abs`), and some check their
arguments under their own name (`acos` of a string says "acos requires ..."). Where JAX's alias
is a `jit(inline=True)` it is dispatched as one program at top level; the others call their
target, whose dispatch runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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


def _promoting(name: str, target: Callable[[Any], Array]) -> Callable[[ArrayLike], Array]:
    """The array API's `name` for `target`: its arguments promoted under its own name."""

    def alias(x: ArrayLike, /) -> Array:
        return target(*p.promote_args(name, x))

    alias.__name__ = alias.__qualname__ = name
    return dispatched_at_top_level(alias)


acos = _promoting("acos", arccos)
acosh = _promoting("acosh", arccosh)
asin = _promoting("asin", arcsin)
asinh = _promoting("asinh", arcsinh)
atan = _promoting("atan", arctan)
atanh = _promoting("atanh", arctanh)
bitwise_invert = _promoting("bitwise_invert", _lax.bitwise_not)
invert = _promoting("invert", _lax.bitwise_not)


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
