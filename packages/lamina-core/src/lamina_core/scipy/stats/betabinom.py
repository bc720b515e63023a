"""`jax.scipy.stats.betabinom`: the beta-binomial distribution (n trials, Beta(a, b) success
probability), offset by `loc`."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.numpy import promotion as p
from lamina_core.scipy._special_gamma import betaln
from lamina_core.transforms import Jitted

Array = Any


def _logpmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Array:
    """log C(n, y) + log B(y + a, n - y + b) - log B(a, b) at y = floor(k) - loc; 0 at
    y == n == 0, -inf off the support, nan for n < 0 or a, b <= 0."""
    k, n, a, b, loc = p.promote_args_inexact("betabinom.logpmf", k, n, a, b, loc)
    y = lax.sub(lax.floor(k), loc)
    one, zero = p.const(y, 1), p.const(y, 0)
    log_comb = lax.neg(lax.add(lax.log1p(n), betaln(lax.add(lax.sub(n, y), one), lax.add(y, one))))
    log_betas = lax.sub(betaln(lax.add(y, a), lax.add(lax.sub(n, y), b)), betaln(a, b))
    log_probs = lax.add(log_comb, log_betas)
    log_probs = jnp.where(jnp.logical_and(lax.eq(y, zero), lax.eq(n, zero)), 0.0, log_probs)
    off_support = jnp.logical_or(
        jnp.logical_or(lax.lt(y, lax.neg(loc)), lax.gt(y, n)), lax.le(lax.add(y, a), zero)
    )
    log_probs = jnp.where(off_support, -np.inf, log_probs)
    bad_params = jnp.logical_or(jnp.logical_or(lax.lt(n, zero), lax.le(a, zero)), lax.le(b, zero))
    return jnp.where(bad_params, np.nan, log_probs)


_logpmf.__name__ = _logpmf.__qualname__ = "logpmf"
logpmf = Jitted(_logpmf)


def pmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Array:
    """exp(logpmf)."""
    return lax.exp(logpmf(k, n, a, b, loc))
