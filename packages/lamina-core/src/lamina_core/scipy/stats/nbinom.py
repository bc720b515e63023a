"""`jax.scipy.stats.nbinom`: the negative binomial distribution (failures before the `n`-th
success of probability `p`), offset by `loc`."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.numpy import promotion as pr
from lamina_core.scipy._special_gamma import gammaln
from lamina_core.scipy._special_log import xlogy

Array = Any


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Array:
    """log C(y + n - 1, y) + n log(p) + y log(1 - p) at y = k - loc; -inf for k < loc."""
    k, n, p, loc = pr.promote_args_inexact("nbinom.logpmf", k, n, p, loc)
    one = pr.const(k, 1)
    y = lax.sub(k, loc)
    log_comb = lax.sub(lax.sub(gammaln(lax.add(y, n)), gammaln(n)), gammaln(lax.add(y, one)))
    log_linear = lax.add(xlogy(n, p), xlogy(y, lax.sub(one, p)))
    log_probs = lax.add(log_comb, log_linear)
    return jnp.where(lax.lt(k, loc), -np.inf, log_probs)


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Array:
    """exp(logpmf)."""
    return lax.exp(logpmf(k, n, p, loc))
