"""`jax.scipy.stats.gumbel_l`: the left-skewed Gumbel (minimum extreme value) distribution;
nan wherever scale <= 0 (and for ppf outside (0, 1))."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.numpy import promotion as p
from lamina_core.scipy._special_log import xlog1py, xlogy

Array = Any


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """-log(scale) + z - exp(z), z = (x - loc) / scale."""
    x, loc, scale = p.promote_args_inexact("gumbel_l.logpdf", x, loc, scale)
    ok = lax.gt(scale, p.const(scale, 0))
    z = lax.div(lax.sub(x, loc), scale)
    neg_log_scale = xlogy(-1, scale)
    log_kernel = lax.sub(z, lax.exp(z))
    return jnp.where(ok, lax.add(neg_log_scale, log_kernel), np.nan)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """exp(logpdf)."""
    return lax.exp(logpdf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log(1 - exp(-exp(z))), by expm1."""
    x, loc, scale = p.promote_args_inexact("gumbel_l.logcdf", x, loc, scale)
    ok = lax.gt(scale, p.const(scale, 0))
    z = lax.div(lax.sub(x, loc), scale)
    neg_exp_z = lax.neg(lax.exp(z))
    return jnp.where(ok, lax.log(-lax.expm1(neg_exp_z)), np.nan)


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """exp(logcdf)."""
    return lax.exp(logcdf(x, loc, scale))


def ppf(p_: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """loc + scale log(-log(1 - q)) for q in (0, 1)."""
    p_, loc, scale = p.promote_args_inexact("gumbel_l.ppf", p_, loc, scale)
    ok = lax.bitwise_and(lax.gt(p_, p.const(p_, 0)), lax.lt(p_, p.const(p_, 1)))
    neg_log1m_q = xlog1py(-1, lax.neg(p_))
    quantile = lax.add(loc, lax.mul(scale, lax.log(neg_log1m_q)))
    return jnp.where(ok, quantile, np.nan)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """exp(logsf)."""
    return jnp.exp(logsf(x, loc, scale))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """-exp(z)."""
    x, loc, scale = p.promote_args_inexact("gumbel_l.logsf", x, loc, scale)
    ok = lax.gt(scale, p.const(scale, 0))
    z = lax.div(lax.sub(x, loc), scale)
    return jnp.where(ok, lax.neg(lax.exp(z)), np.nan)
