"""`jax.scipy.stats.vonmises`: the von Mises (circular normal) distribution of concentration
`kappa`, density only (as JAX)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.numpy import promotion as p

Array = Any


def logpdf(x: Any, kappa: Any) -> Array:
    """kappa (cos x - 1) - log(2 pi i0e(kappa)); nan for kappa <= 0."""
    x, kappa = p.promote_args_inexact("vonmises.logpdf", x, kappa)
    positive = lax.gt(kappa, p.const(kappa, 0))
    log_probs = kappa * (jnp.cos(x) - 1) - jnp.log(2 * np.pi * lax.bessel_i0e(kappa))
    return jnp.where(positive, log_probs, np.nan)


def pdf(x: Any, kappa: Any) -> Array:
    """exp(logpdf)."""
    return lax.exp(logpdf(x, kappa))
