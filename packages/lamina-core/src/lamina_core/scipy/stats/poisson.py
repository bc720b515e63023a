"""`jax.scipy.stats.poisson`: the Poisson distribution with mean `mu` (the CDF needs the
incomplete gamma function, which Lamina lacks)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.numpy import dtype_of, ensure_arraylike, shape_of
from lamina_core.numpy import promotion as p
from lamina_core.scipy._special_gamma import gammaln
from lamina_core.scipy._special_log import entr, xlogy
from lamina_core.transforms import Jitted

Array = Any


def logpmf(k: Any, mu: Any, loc: Any = 0) -> Array:
    """k log(mu) - log(k!) - mu at integers k >= loc, -inf elsewhere."""
    k, mu, loc = p.promote_args_inexact("poisson.logpmf", k, mu, loc)
    zero = p.const(k, 0)
    x = lax.sub(k, loc)
    log_probs = xlogy(x, mu) - gammaln(x + 1) - mu
    off_support = jnp.logical_or(lax.lt(x, zero), lax.ne(jnp.round(k), k))
    return jnp.where(off_support, -np.inf, log_probs)


def pmf(k: Any, mu: Any, loc: Any = 0) -> Array:
    """exp(logpmf)."""
    return jnp.exp(logpmf(k, mu, loc))


@Jitted
def entropy(mu: Any, loc: Any = 0) -> Array:
    """The entropy of Poisson(mu): summed over k below a mu-dependent bound for mu < 100,
    by the asymptotic expansion above; 0 at mu == 0. `loc` only broadcasts."""
    mu, loc = ensure_arraylike("poisson.entropy", mu, loc)
    mu, loc = p.promote_dtypes_inexact(mu, loc)
    out_shape = jnp.broadcast_shapes(shape_of(mu), shape_of(loc))
    flat = jnp.ravel(mu)
    zeros = jnp.zeros_like(flat)
    result = jnp.where(
        flat == 0,
        zeros,
        jnp.where(
            flat < 10,
            _entropy_by_sum(flat, 35, 0),
            jnp.where(flat < 100, _entropy_by_sum(flat, 250, 10), _entropy_asymptotic(flat)),
        ),
    )
    return jnp.broadcast_to(jnp.reshape(result, shape_of(mu)), out_shape)


def _entropy_by_sum(mu: Any, max_k: int, sqrt_coeff: int) -> Array:
    """-sum p log p over k < ceil(mu + sqrt_coeff sqrt(mu) + 20), k capped at max_k."""
    k = jnp.arange(max_k, dtype=dtype_of(mu))[:, None]
    probs = pmf(k, mu, 0)
    bound = mu + 20 if not sqrt_coeff else mu + sqrt_coeff * jnp.sqrt(mu) + 20
    upper = jnp.ceil(bound).astype(dtype_of(k))
    masked = jnp.where(k < upper[None, :], probs, 0.0)
    return jnp.sum(entr(masked), axis=0)


def _entropy_asymptotic(mu: Any) -> Array:
    return 0.5 * jnp.log(2 * np.pi * np.e * mu) - 1.0 / (12 * mu)
