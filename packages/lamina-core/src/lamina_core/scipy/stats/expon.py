"""`jax.scipy.stats.expon`: the exponential distribution starting at `loc`, mean `scale`."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.numpy import promotion as p

Array = Any


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """-(x - loc) / scale - log(scale) from loc on, -inf before."""
    x, loc, scale = p.promote_args_inexact("expon.logpdf", x, loc, scale)
    log_scale = lax.log(scale)
    linear = lax.div(lax.sub(x, loc), scale)
    log_probs = lax.neg(lax.add(linear, log_scale))
    return jnp.where(lax.lt(x, loc), -np.inf, log_probs)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """exp(logpdf)."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """1 - exp(-(x - loc) / scale) from loc on (by expm1), 0 before."""
    x, loc, scale = p.promote_args_inexact("expon.cdf", x, loc, scale)
    neg_scaled = lax.div(lax.sub(loc, x), scale)
    return jnp.where(lax.lt(x, loc), jnp.zeros_like(neg_scaled), lax.neg(lax.expm1(neg_scaled)))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log1p(-sf)."""
    return lax.log1p(lax.neg(sf(x, loc, scale)))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """-(x - loc) / scale from loc on, 0 before."""
    x, loc, scale = p.promote_args_inexact("expon.sf", x, loc, scale)
    neg_scaled = lax.div(lax.sub(loc, x), scale)
    return jnp.where(lax.lt(x, loc), jnp.zeros_like(neg_scaled), neg_scaled)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """exp(logsf)."""
    return lax.exp(logsf(x, loc, scale))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """loc - scale * log1p(-q) for q in [0, 1], nan outside."""
    q, loc, scale = p.promote_args_inexact("expon.ppf", q, loc, scale)
    invalid = jnp.isnan(q) | (q < 0) | (q > 1)
    return jnp.where(invalid, np.nan, lax.sub(loc, lax.mul(scale, lax.log1p(lax.neg(q)))))
