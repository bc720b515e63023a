"""`jax.scipy.stats.binom`: the binomial distribution of `n` trials of success probability
`p`, offset by `loc`."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.numpy import promotion as pr
from lamina_core.scipy._special_gamma import gammaln
from lamina_core.scipy._special_log import xlog1py, xlogy

Array = Any


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Array:
    """log C(n, y) + y log(p) + (n - y) log(1 - p) at y = k - loc (0 where the log-linear
    term is 0 or y == n == 0); -inf outside loc <= k < loc + n + 1."""
    k, n, p, loc = pr.promote_args_inexact("binom.logpmf", k, n, p, loc)
    y = lax.sub(k, loc)
    zero = pr.const(y, 0)
    log_comb = lax.sub(gammaln(n + 1), lax.add(gammaln(y + 1), gammaln(n - y + 1)))
    log_linear = lax.add(xlogy(y, p), xlog1py(lax.sub(n, y), lax.neg(p)))
    log_probs = lax.add(log_comb, log_linear)
    certain = jnp.logical_or(
        jnp.logical_and(lax.eq(y, zero), lax.eq(n, zero)), lax.eq(log_linear, zero)
    )
    log_probs = jnp.where(certain, 0.0, log_probs)
    return jnp.where(lax.ge(k, loc) & lax.lt(k, loc + n + 1), log_probs, -np.inf)


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Array:
    """exp(logpmf)."""
    return lax.exp(logpmf(k, n, p, loc))
