"""`jax.scipy.stats.multinomial`: the multinomial distribution of `n` draws over the
categories of probabilities `p` (last axis)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.ir import dtypes
from lamina_core.numpy import dtype_of
from lamina_core.numpy import promotion as pr
from lamina_core.scipy._special_gamma import gammaln
from lamina_core.scipy._special_log import xlogy

Array = Any


def logpmf(x: Any, n: Any, p: Any) -> Array:
    """log n! + sum(x log p - log x!) over the last axis; -inf unless the counts `x` sum to
    `n`. `x` and `n` must be integers."""
    (p,) = pr.promote_args_inexact("multinomial.logpmf", p)
    x, n = pr.promote_args_numeric("multinomial.logpmf", x, n)
    if not dtypes.issubdtype(dtype_of(x), np.integer):
        raise ValueError(
            f"x and n must be of integer type; got x.dtype={dtype_of(x)}, n.dtype={dtype_of(n)}"
        )
    x = jnp.astype(x, dtype_of(p))
    n = jnp.astype(n, dtype_of(p))
    log_probs = gammaln(n + 1) + jnp.sum(xlogy(x, p) - gammaln(x + 1), axis=-1)
    return jnp.where(jnp.equal(jnp.sum(x), n), log_probs, -np.inf)


def pmf(x: Any, n: Any, p: Any) -> Array:
    """exp(logpmf)."""
    return lax.exp(logpmf(x, n, p))
