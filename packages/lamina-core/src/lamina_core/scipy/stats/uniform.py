"""`jax.scipy.stats.uniform`: the uniform distribution on [loc, loc + scale]."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.numpy import dtype_of, select
from lamina_core.numpy import promotion as p

Array = Any


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """-log(scale) on [loc, loc + scale], -inf outside."""
    x, loc, scale = p.promote_args_inexact("uniform.logpdf", x, loc, scale)
    log_probs = lax.neg(lax.log(scale))
    outside = jnp.logical_or(lax.gt(x, lax.add(loc, scale)), lax.lt(x, loc))
    return jnp.where(outside, -np.inf, log_probs)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """exp(logpdf)."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """0 before loc, 1 after loc + scale, linear between."""
    x, loc, scale = p.promote_args_inexact("uniform.cdf", x, loc, scale)
    zero, one = jnp.array(0, dtype_of(x)), jnp.array(1, dtype_of(x))
    conds = [
        lax.lt(x, loc),
        lax.gt(x, lax.add(loc, scale)),
        lax.ge(x, loc) & lax.le(x, lax.add(loc, scale)),
    ]
    return select(conds, [zero, one, lax.div(lax.sub(x, loc), scale)])


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """loc + scale * q for q in [0, 1], nan outside."""
    q, loc, scale = p.promote_args_inexact("uniform.ppf", q, loc, scale)
    invalid = jnp.isnan(q) | (q < 0) | (q > 1)
    return jnp.where(invalid, np.nan, lax.add(loc, lax.mul(scale, q)))
