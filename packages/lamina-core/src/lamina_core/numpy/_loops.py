"""`jnp` functions JAX builds on control flow: `gcd` and `lcm` (a `while` loop) and `polyval`
(a `scan`, Horner's rule), each in a nested `jit` named as JAX names it, so they print alike.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from lamina_core import lax as _lax
from lamina_core.ir import dtypes
from lamina_core.lax import full_like, scan, while_loop
from lamina_core.numpy import _promote
from lamina_core.numpy import _promote as p
from lamina_core.numpy import _reductions as r
from lamina_core.numpy import _ufuncs as u
from lamina_core.numpy._ufuncs_composite import floor_divide, where
from lamina_core.numpy._util import Array, ArrayLike, dtype_of, shape_of
from lamina_core.transforms import Jitted


def _gcd_cond(xs: tuple[Any, Any]) -> Any:
    _, x2 = xs
    return r.any(x2 != 0)


def _gcd_body(xs: tuple[Any, Any]) -> tuple[Any, Any]:
    x1, x2 = xs
    # Each comparison is written (and so staged) twice, as JAX's body does.
    x1, x2 = where(x2 != 0, x2, x1), where(x2 != 0, _lax.rem(x1, x2), p.const(x2, 0))
    return where(x1 < x2, x2, x1), where(x1 < x2, x1, x2)


def _integer_args(name: str, x1: ArrayLike, x2: ArrayLike) -> list[Any]:
    p.check_arraylike(name, x1, x2)
    return p.promote_dtypes(x1, x2)


@Jitted
def gcd(x1: ArrayLike, x2: ArrayLike) -> Array:
    """The greatest common divisor of `|x1|` and `|x2|`, elementwise (integers only)."""
    x1, x2 = _integer_args("gcd", x1, x2)
    if not dtypes.issubdtype(dtype_of(x1), np.integer):
        raise ValueError("Arguments to jax.numpy.gcd must be integers.")
    x1, x2 = p.broadcast_arrays(x1, x2)
    out, _ = while_loop(_gcd_cond, _gcd_body, (u.absolute(x1), u.absolute(x2)))
    return out


@Jitted
def lcm(x1: ArrayLike, x2: ArrayLike) -> Array:
    """The least common multiple of `|x1|` and `|x2|`, elementwise (integers only)."""
    x1, x2 = _integer_args("lcm", x1, x2)
    x1, x2 = u.absolute(x1), u.absolute(x2)
    if not dtypes.issubdtype(dtype_of(x1), np.integer):
        raise ValueError("Arguments to jax.numpy.lcm must be integers.")
    d = gcd(x1, x2)
    return where(d == 0, p.const(d, 0), u.multiply(x1, floor_divide(x2, d)))


@partial(Jitted, static_argnames="unroll")
def polyval(p: ArrayLike, x: ArrayLike, *, unroll: int = 16) -> Array:
    """The polynomial with coefficients `p` (highest degree first) at `x`, by Horner's rule
    as a `scan` over the coefficients (`unroll` steps per loop trip)."""
    _promote.check_arraylike("polyval", p, x)
    coeffs, xs = _promote.promote_dtypes(p, x)
    shape = _promote.broadcast_shapes(shape_of(coeffs)[1:], shape_of(xs))
    y = full_like(xs, 0, shape=shape, dtype=dtype_of(xs))
    y, _ = scan(lambda acc, c: (acc * xs + c, None), y, coeffs, unroll=unroll)
    return y


__all__ = ["gcd", "lcm", "polyval"]
