"""`jax.scipy.stats.norm`: the normal distribution with location `loc` and scale `scale`."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.numpy import promotion as p
from lamina_core.scipy import _special_ndtr as special

Array = Any


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """-(log(2 pi scale^2) + ((x - loc) / scale)^2) / 2."""
    x, loc, scale = p.promote_args_inexact("norm.logpdf", x, loc, scale)
    scale_sq = lax.square(scale)
    log_normalizer = lax.log(lax.mul(p.const(x, 2 * np.pi), scale_sq))
    quadratic = lax.div(lax.square(lax.sub(x, loc)), scale_sq)
    return lax.div(lax.add(log_normalizer, quadratic), p.const(x, -2))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """exp(logpdf)."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """ndtr((x - loc) / scale)."""
    x, loc, scale = p.promote_args_inexact("norm.cdf", x, loc, scale)
    return special.ndtr(lax.div(lax.sub(x, loc), scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log_ndtr((x - loc) / scale)."""
    x, loc, scale = p.promote_args_inexact("norm.logcdf", x, loc, scale)
    return special.log_ndtr(lax.div(lax.sub(x, loc), scale))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The quantile function: ndtri(q) * scale + loc."""
    return jnp.asarray(special.ndtri(q) * scale + loc, float)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log(1 - cdf), as logcdf of the reflected point."""
    x, loc, scale = p.promote_args_inexact("norm.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """1 - cdf, as cdf of the reflected point."""
    x, loc, scale = p.promote_args_inexact("norm.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The inverse of sf: ppf(1 - q)."""
    return ppf(lax.sub(p.const(q, 1), q), loc, scale)
