"""`jax.scipy.stats.gennorm`: the generalized normal distribution of shape `beta` (density
and CDF, as JAX)."""

from __future__ import annotations

from typing import Any

from lamina_core import lax
from lamina_core.numpy import promotion as p

Array = Any


def logpdf(x: Any, beta: Any) -> Array:
    """log(beta / 2) - lgamma(1 / beta) - |x|^beta."""
    x, beta = p.promote_args_inexact("gennorm.logpdf", x, beta)
    return lax.log(0.5 * beta) - lax.lgamma(1 / beta) - lax.abs(x) ** beta


def cdf(x: Any, beta: Any) -> Array:
    """(1 + sign(x) P(1 / beta, |x|^beta)) / 2, P the regularized lower incomplete gamma."""
    x, beta = p.promote_args_inexact("gennorm.cdf", x, beta)
    return 0.5 * (1 + lax.sign(x) * lax.igamma(1 / beta, lax.abs(x) ** beta))


def pdf(x: Any, beta: Any) -> Array:
    """exp(logpdf)."""
    return lax.exp(logpdf(x, beta))
