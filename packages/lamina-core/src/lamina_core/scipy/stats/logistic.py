"""`jax.scipy.stats.logistic`: the logistic distribution with location `loc` and scale `scale`."""

from __future__ import annotations

from typing import Any

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.numpy import promotion as p
from lamina_core.scipy._special_log import expit, logit

Array = Any


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """-2 log(exp(z / 2) + exp(-z / 2)) - log(scale), z = (x - loc) / scale."""
    x, loc, scale = p.promote_args_inexact("logistic.logpdf", x, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    two = p.const(z, 2)
    half_z = lax.div(z, two)
    return lax.sub(lax.mul(lax.neg(two), jnp.logaddexp(half_z, lax.neg(half_z))), lax.log(scale))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """exp(logpdf)."""
    return lax.exp(logpdf(x, loc, scale))


def ppf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """logit(q) * scale + loc."""
    x, loc, scale = p.promote_args_inexact("logistic.ppf", x, loc, scale)
    return lax.add(lax.mul(logit(x), scale), loc)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """expit(-(x - loc) / scale)."""
    x, loc, scale = p.promote_args_inexact("logistic.sf", x, loc, scale)
    return expit(lax.neg(lax.div(lax.sub(x, loc), scale)))


def isf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """-logit(q) * scale + loc."""
    x, loc, scale = p.promote_args_inexact("logistic.isf", x, loc, scale)
    return lax.add(lax.mul(lax.neg(logit(x)), scale), loc)


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """expit((x - loc) / scale)."""
    x, loc, scale = p.promote_args_inexact("logistic.cdf", x, loc, scale)
    return expit(lax.div(lax.sub(x, loc), scale))
