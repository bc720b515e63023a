"""`jax.scipy.stats.gamma`: the gamma distribution with shape `a` (density only: the CDF and
survival function need the incomplete gamma function, which Lamina lacks)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.numpy import promotion as p
from lamina_core.scipy._special_gamma import gammaln
from lamina_core.scipy._special_log import xlogy

Array = Any


def logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """(a - 1) log(y) - y - log Gamma(a) - log(scale), y = (x - loc) / scale; -inf below loc."""
    x, a, loc, scale = p.promote_args_inexact("gamma.logpdf", x, a, loc, scale)
    ok = lax.ge(x, loc)
    one = p.const(x, 1)
    # Below loc y is replaced by 1 so the discarded branch stays finite (and so its gradient).
    y = jnp.where(ok, lax.div(lax.sub(x, loc), scale), one)
    log_linear = lax.sub(xlogy(lax.sub(a, one), y), y)
    shape_terms = lax.add(gammaln(a), lax.log(scale))
    return jnp.where(ok, lax.sub(log_linear, shape_terms), -np.inf)


def pdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """exp(logpdf)."""
    return lax.exp(logpdf(x, a, loc, scale))
