"""`jax.scipy.stats.gumbel_r`: the right-skewed Gumbel (maximum extreme value) distribution;
nan wherever scale <= 0 (and for ppf outside (0, 1))."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.nn import log1mexp
from lamina_core.numpy import promotion as p
from lamina_core.scipy._special_log import xlogy

Array = Any


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """-log(scale) - (z + exp(-z)), z = (x - loc) / scale."""
    x, loc, scale = p.promote_args_inexact("gumbel_r.logpdf", x, loc, scale)
    ok = lax.gt(scale, p.const(scale, 0))
    z = lax.div(lax.sub(x, loc), scale)
    neg_log_scale = xlogy(-1, scale)
    log_kernel = lax.neg(lax.add(z, lax.exp(lax.neg(z))))
    return jnp.where(ok, lax.add(neg_log_scale, log_kernel), np.nan)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """exp(logpdf)."""
    return lax.exp(logpdf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """-exp(-z)."""
    x, loc, scale = p.promote_args_inexact("gumbel_r.logcdf", x, loc, scale)
    ok = lax.gt(scale, p.const(scale, 0))
    z = lax.div(lax.sub(x, loc), scale)
    return jnp.where(ok, lax.neg(lax.exp(lax.neg(z))), np.nan)


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """exp(logcdf)."""
    return lax.exp(logcdf(x, loc, scale))


def ppf(p_: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """loc - scale log(-log(q)) for q in (0, 1)."""
    p_, loc, scale = p.promote_args_inexact("gumbel_r.ppf", p_, loc, scale)
    ok = lax.bitwise_and(lax.gt(p_, p.const(p_, 0)), lax.lt(p_, p.const(p_, 1)))
    neg_log_q = xlogy(-1, p_)
    quantile = lax.sub(loc, lax.mul(scale, lax.log(neg_log_q)))
    return jnp.where(ok, quantile, np.nan)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """1 - exp(-exp(-z))."""
    x, loc, scale = p.promote_args_inexact("gumbel_r.sf", x, loc, scale)
    ok = lax.gt(scale, p.const(scale, 0))
    neg_z = lax.div(lax.sub(loc, x), scale)
    cdf_value = lax.exp(lax.neg(lax.exp(neg_z)))
    return jnp.where(ok, lax.sub(p.const(x, 1), cdf_value), np.nan)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log(1 - exp(-exp(-z))), by log1mexp."""
    x, loc, scale = p.promote_args_inexact("gumbel_r.logsf", x, loc, scale)
    ok = lax.gt(scale, p.const(scale, 0))
    neg_z = lax.div(lax.sub(loc, x), scale)
    return jnp.where(ok, log1mexp(lax.exp(neg_z)), np.nan)
