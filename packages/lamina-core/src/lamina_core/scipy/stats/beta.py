"""`jax.scipy.stats.beta`: the beta distribution on [loc, loc + scale] (density only: the CDF
needs the incomplete beta function, which Lamina lacks)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.numpy import promotion as p
from lamina_core.scipy._special_gamma import betaln
from lamina_core.scipy._special_log import xlog1py, xlogy

Array = Any


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """(a - 1) log(y) + (b - 1) log(1 - y) - log B(a, b) - log(scale); -inf outside the
    support, nan for non-positive a, b or scale."""
    x, a, b, loc, scale = p.promote_args_inexact("beta.logpdf", x, a, b, loc, scale)
    one = p.const(x, 1)
    zero = p.const(a, 0)
    shape_term = lax.neg(betaln(a, b))
    y = lax.div(lax.sub(x, loc), scale)
    log_linear = lax.add(xlogy(lax.sub(a, one), y), xlog1py(lax.sub(b, one), lax.neg(y)))
    log_probs = lax.sub(lax.add(shape_term, log_linear), lax.log(scale))
    outside = jnp.logical_or(lax.gt(x, lax.add(loc, scale)), lax.lt(x, loc))
    result = jnp.where(outside, -np.inf, log_probs)
    bad_params = jnp.logical_or(
        jnp.logical_or(lax.le(a, zero), lax.le(b, zero)), lax.le(scale, zero)
    )
    return jnp.where(bad_params, np.nan, result)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """exp(logpdf)."""
    return lax.exp(logpdf(x, a, b, loc, scale))
