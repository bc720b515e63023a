"""`jax.scipy.stats.cauchy`: the Cauchy distribution with location `loc` and scale `scale`."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.numpy import promotion as p

Array = Any


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """-log(pi scale) - log1p(z^2), z = (x - loc) / scale."""
    x, loc, scale = p.promote_args_inexact("cauchy.logpdf", x, loc, scale)
    pi = p.const(x, np.pi)
    z = lax.div(lax.sub(x, loc), scale)
    normalizer = lax.log(lax.mul(pi, scale))
    return lax.neg(lax.add(normalizer, lax.log1p(lax.mul(z, z))))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """exp(logpdf)."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """1/2 + arctan(z) / pi."""
    x, loc, scale = p.promote_args_inexact("cauchy.cdf", x, loc, scale)
    pi = p.const(x, np.pi)
    z = lax.div(lax.sub(x, loc), scale)
    return lax.add(p.const(x, 0.5), lax.mul(lax.div(p.const(x, 1.0), pi), jnp.arctan(z)))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log(cdf)."""
    return lax.log(cdf(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """1 - cdf, as cdf of the reflected point."""
    x, loc, scale = p.promote_args_inexact("cauchy.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log(sf), as logcdf of the reflected point."""
    x, loc, scale = p.promote_args_inexact("cauchy.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """tan(pi / 2 - pi q) * scale + loc."""
    q, loc, scale = p.promote_args_inexact("cauchy.isf", q, loc, scale)
    pi, half_pi = p.const(q, np.pi), p.const(q, np.pi / 2)
    unscaled = lax.tan(lax.sub(half_pi, lax.mul(pi, q)))
    return lax.add(lax.mul(unscaled, scale), loc)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """tan(pi q - pi / 2) * scale + loc."""
    q, loc, scale = p.promote_args_inexact("cauchy.ppf", q, loc, scale)
    pi, half_pi = p.const(q, np.pi), p.const(q, np.pi / 2)
    unscaled = lax.tan(lax.sub(lax.mul(pi, q), half_pi))
    return lax.add(lax.mul(unscaled, scale), loc)
