"""`jax.scipy.stats.t`: Student's t distribution with `df` degrees of freedom (the CDF needs
the incomplete beta function, which Lamina lacks)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core.numpy import promotion as p

Array = Any


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log density of the location-scale t distribution."""
    x, df, loc, scale = p.promote_args_inexact("t.logpdf", x, df, loc, scale)
    two = p.const(x, 2)
    z = lax.div(lax.sub(x, loc), scale)
    half_df = lax.div(df, two)
    half_df_plus_half = lax.add(half_df, p.const(x, 0.5))
    scale_sq_pi = lax.mul(lax.mul(scale, scale), p.const(x, np.pi))
    log_term = lax.div(lax.log(lax.mul(scale_sq_pi, df)), two)
    normalizer = lax.sub(lax.add(lax.lgamma(half_df), log_term), lax.lgamma(half_df_plus_half))
    quadratic = lax.div(lax.mul(z, z), df)
    return lax.neg(lax.add(normalizer, lax.mul(half_df_plus_half, lax.log1p(quadratic))))


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """exp(logpdf)."""
    return lax.exp(logpdf(x, df, loc, scale))
