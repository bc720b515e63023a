"""`jax.scipy.stats.laplace`: the Laplace (double exponential) distribution."""

from __future__ import annotations

from typing import Any

from lamina_core import lax
from lamina_core.numpy import promotion as p

Array = Any


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """-|x - loc| / scale - log(2 scale)."""
    x, loc, scale = p.promote_args_inexact("laplace.logpdf", x, loc, scale)
    two = p.const(x, 2)
    linear = lax.div(lax.abs(lax.sub(x, loc)), scale)
    return lax.neg(lax.add(linear, lax.log(lax.mul(two, scale))))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """exp(logpdf)."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """exp(z) / 2 for z = (x - loc) / scale <= 0, 1 - exp(-z) / 2 above."""
    x, loc, scale = p.promote_args_inexact("laplace.cdf", x, loc, scale)
    half, one, zero = p.const(x, 0.5), p.const(x, 1), p.const(x, 0)
    z = lax.div(lax.sub(x, loc), scale)
    below = lax.le(z, zero)
    lower = lax.mul(half, lax.exp(z))
    upper = lax.sub(one, lax.mul(half, lax.exp(lax.neg(z))))
    return lax.select(below, lower, upper)
