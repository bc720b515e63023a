"""`jax.scipy.stats.chi2`: the chi-squared distribution with `df` degrees of freedom (density
only: the CDF needs the incomplete gamma function, which Lamina lacks)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.numpy import promotion as p

Array = Any


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """(df/2 - 1) log(y) - y/2 - log Gamma(df/2) - (df/2) log 2 - log(scale); -inf below loc."""
    x, df, loc, scale = p.promote_args_inexact("chi2.logpdf", x, df, loc, scale)
    one, two = p.const(x, 1), p.const(x, 2)
    y = lax.div(lax.sub(x, loc), scale)
    half_df = lax.div(df, two)
    kernel = lax.sub(lax.mul(lax.sub(half_df, one), lax.log(y)), lax.div(y, two))
    normalizer = lax.neg(lax.add(lax.lgamma(half_df), lax.div(lax.mul(lax.log(two), df), two)))
    log_probs = lax.add(lax.sub(normalizer, lax.log(scale)), kernel)
    return jnp.where(lax.lt(x, loc), -np.inf, log_probs)


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """exp(logpdf)."""
    return lax.exp(logpdf(x, df, loc, scale))
