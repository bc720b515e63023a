"""`jax.scipy.stats.geom`: the geometric distribution (trials to the first success)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.numpy import promotion as pr
from lamina_core.scipy._special_log import xlog1py

Array = Any


def logpmf(k: Any, p: Any, loc: Any = 0) -> Array:
    """(k - 1) log(1 - p) + log(p) for k - loc >= 1, -inf below."""
    k, p, loc = pr.promote_args_inexact("geom.logpmf", k, p, loc)
    zero, one = pr.const(k, 0), pr.const(k, 1)
    x = lax.sub(k, loc)
    log_probs = xlog1py(lax.sub(x, one), -p) + lax.log(p)
    return jnp.where(lax.le(x, zero), -np.inf, log_probs)


def pmf(k: Any, p: Any, loc: Any = 0) -> Array:
    """exp(logpmf)."""
    return jnp.exp(logpmf(k, p, loc))
