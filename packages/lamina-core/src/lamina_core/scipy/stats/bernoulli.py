"""`jax.scipy.stats.bernoulli`: the Bernoulli distribution with success probability `p`."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.numpy import promotion as pr
from lamina_core.numpy import select
from lamina_core.scipy._special_log import xlog1py, xlogy

Array = Any


def logpmf(k: Any, p: Any, loc: Any = 0) -> Array:
    """k log(p) + (1 - k) log(1 - p) for k - loc in [0, 1], -inf outside."""
    k, p, loc = pr.promote_args_inexact("bernoulli.logpmf", k, p, loc)
    zero, one = pr.const(k, 0), pr.const(k, 1)
    x = lax.sub(k, loc)
    log_probs = xlogy(x, p) + xlog1py(lax.sub(one, x), -p)
    return jnp.where(jnp.logical_or(lax.lt(x, zero), lax.gt(x, one)), -np.inf, log_probs)


def pmf(k: Any, p: Any, loc: Any = 0) -> Array:
    """exp(logpmf)."""
    return jnp.exp(logpmf(k, p, loc))


def cdf(k: Any, p: Any) -> Array:
    """0 below 0, 1 - p on [0, 1), 1 from 1 on; nan for nan or p outside [0, 1]."""
    k, p = pr.promote_args_inexact("bernoulli.cdf", k, p)
    zero, one = pr.const(k, 0), pr.const(k, 1)
    conds = [
        jnp.isnan(k) | jnp.isnan(p) | (p < zero) | (p > one),
        lax.lt(k, zero),
        jnp.logical_and(lax.ge(k, zero), lax.lt(k, one)),
        lax.ge(k, one),
    ]
    return select(conds, [jnp.nan, zero, one - p, one])


def ppf(q: Any, p: Any) -> Array:
    """0 for q <= 1 - p, else 1; nan for nan or q or p outside [0, 1]."""
    q, p = pr.promote_args_inexact("bernoulli.ppf", q, p)
    zero, one = pr.const(q, 0), pr.const(q, 1)
    invalid = jnp.isnan(q) | jnp.isnan(p) | (p < zero) | (p > one) | (q < zero) | (q > one)
    return jnp.where(invalid, jnp.nan, jnp.where(lax.le(q, one - p), zero, one))
