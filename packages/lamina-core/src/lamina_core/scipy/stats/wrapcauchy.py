"""`jax.scipy.stats.wrapcauchy`: the wrapped Cauchy distribution on [0, 2 pi] of shape `c`
(0 < c < 1), density only (as JAX)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.numpy import promotion as p

Array = Any


def logpdf(x: Any, c: Any) -> Array:
    """log((1 - c^2) / (2 pi (1 + c^2 - 2 c cos x))); -inf outside [0, 2 pi], nan unless
    0 < c < 1."""
    x, c = p.promote_args_inexact("wrapcauchy.logpdf", x, c)
    c_ok = lax.gt(c, p.const(c, 0)) & lax.lt(c, p.const(c, 1))
    x_ok = lax.ge(x, p.const(x, 0)) & lax.le(x, p.const(x, np.pi * 2))
    log_probs = jnp.log(1 - c * c) - jnp.log(2 * np.pi) - jnp.log(1 + c * c - 2 * c * jnp.cos(x))
    return jnp.where(c_ok, jnp.where(x_ok, log_probs, -np.inf), np.nan)


def pdf(x: Any, c: Any) -> Array:
    """exp(logpdf)."""
    return lax.exp(logpdf(x, c))
