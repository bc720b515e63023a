"""`jax.scipy.stats.pareto`: the Pareto distribution with shape `b`, from loc + scale on."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.numpy import promotion as p

Array = Any


def logpdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log(b / scale) - (b + 1) log(z) from loc + scale on, -inf before."""
    x, b, loc, scale = p.promote_args_inexact("pareto.logpdf", x, b, loc, scale)
    one = p.const(x, 1)
    z = lax.div(lax.sub(x, loc), scale)
    normalizer = lax.log(lax.div(scale, b))
    log_probs = lax.neg(lax.add(normalizer, lax.mul(lax.add(b, one), lax.log(z))))
    return jnp.where(lax.lt(x, lax.add(loc, scale)), -np.inf, log_probs)


def pdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """exp(logpdf)."""
    return lax.exp(logpdf(x, b, loc, scale))


def cdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """1 - z**-b from loc + scale on, 0 before."""
    x, b, loc, scale = p.promote_args_inexact("pareto.cdf", x, b, loc, scale)
    one, zero = p.const(x, 1), p.const(x, 0)
    z = lax.div(lax.sub(x, loc), scale)
    value = lax.sub(one, lax.pow(z, lax.neg(b)))
    return jnp.where(lax.lt(x, lax.add(loc, scale)), zero, value)


def logcdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log1p(-z**-b) from loc + scale on, -inf before."""
    x, b, loc, scale = p.promote_args_inexact("pareto.logcdf", x, b, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    value = lax.log1p(lax.neg(lax.pow(z, lax.neg(b))))
    return jnp.where(lax.lt(x, lax.add(loc, scale)), -np.inf, value)


def logsf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """-b log(z) from loc + scale on, 0 before."""
    x, b, loc, scale = p.promote_args_inexact("pareto.logsf", x, b, loc, scale)
    zero = p.const(x, 0)
    z = lax.div(lax.sub(x, loc), scale)
    value = lax.neg(lax.mul(b, lax.log(z)))
    return jnp.where(lax.lt(x, lax.add(loc, scale)), zero, value)


def sf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """exp(logsf)."""
    return lax.exp(logsf(x, b, loc, scale))


def ppf(q: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """loc + scale (1 - q)**(-1/b) for q in [0, 1], nan outside."""
    q, b, loc, scale = p.promote_args_inexact("pareto.ppf", q, b, loc, scale)
    one = p.const(q, 1)
    value = lax.add(loc, lax.mul(scale, lax.pow(lax.sub(one, q), lax.neg(lax.div(one, b)))))
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), np.nan, value)
