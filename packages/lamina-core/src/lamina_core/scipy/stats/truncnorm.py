"""`jax.scipy.stats.truncnorm`: the normal distribution truncated to [a, b] (in standard
units), shifted by `loc` and scaled by `scale`. The log normal mass of an interval is taken
from the tail nearer to it (a difference of `log_ndtr`s) or, for an interval around 0, as
log1p(-ndtr(a) - ndtr(-b)), as JAX 0.10.2 does; `logpdf`, `logcdf`, `cdf`, `logsf` and `sf`
are jitted functions of JAX's names."""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.numpy import promotion as p
from lamina_core.scipy._special_log import logsumexp
from lamina_core.scipy._special_ndtr import log_ndtr, ndtr
from lamina_core.scipy.stats import norm
from lamina_core.transforms import Jitted

Array = Any


def _log_diff(x: Array, y: Array) -> Array:
    """log(exp(x) - exp(y)) by a signed logsumexp."""
    both = jnp.array([x, y])
    return logsumexp(both, b=jnp.array([jnp.ones_like(x), -jnp.ones_like(y)]), axis=0)


def _log_gauss_mass(a: Any, b: Any) -> Array:
    """log(ndtr(b) - ndtr(a)), accurate in both tails."""
    a, b = jnp.broadcast_arrays(jnp.array(a), jnp.array(b))
    left = b <= 0
    right = a > 0
    central = ~(left | right)
    a_tail = jnp.where(right, -b, a)
    b_tail = jnp.where(right, -a, b)
    mass_tail = _log_diff(log_ndtr(b_tail), log_ndtr(a_tail))
    mass_central = jnp.log1p(-ndtr(a) - ndtr(-b))
    return jnp.where(central, mass_central, mass_tail)


def _named(name: str, fun: Any) -> Any:
    fun.__name__ = fun.__qualname__ = name
    return Jitted(fun)


def _logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log of the normal density on [a, b] renormalized by its mass; -inf outside [a, b] (in
    standard units), nan where a >= b."""
    x, a, b, loc, scale = p.promote_args_inexact("truncnorm.logpdf", x, a, b, loc, scale)
    val = lax.sub(norm.logpdf(x, loc, scale), _log_gauss_mass(a, b))
    z = lax.div(lax.sub(x, loc), scale)
    val = jnp.where((z < a) | (z > b), -np.inf, val)
    return jnp.where(a >= b, np.nan, val)


def _logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log of the truncated normal CDF; through the survival function where the CDF is near
    1."""
    x, a, b, loc, scale = p.promote_args_inexact("truncnorm.logcdf", x, a, b, loc, scale)
    x, a, b = jnp.broadcast_arrays(x, a, b)
    x = lax.div(lax.sub(x, loc), scale)
    log_mass = _log_gauss_mass(a, b)
    log_cdf = _log_gauss_mass(a, x) - log_mass
    log_sf = _log_gauss_mass(x, b) - log_mass
    log_cdf = jnp.select(
        [x >= b, x <= a, log_cdf > -0.1, x > a],
        [0, -np.inf, jnp.log1p(-jnp.exp(log_sf)), log_cdf],
    )
    return jnp.where(a >= b, np.nan, log_cdf)


logpdf: Final = _named("logpdf", _logpdf)
logcdf: Final = _named("logcdf", _logcdf)


def _cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """exp(logcdf)."""
    return lax.exp(logcdf(x, a, b, loc, scale))


def _logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """logcdf of the reflected distribution at -x."""
    x, a, b, loc, scale = p.promote_args_inexact("truncnorm.logsf", x, a, b, loc, scale)
    return logcdf(-x, -b, -a, -loc, scale)


def _sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """exp(logsf)."""
    return lax.exp(logsf(x, a, b, loc, scale))


cdf: Final = _named("cdf", _cdf)
logsf: Final = _named("logsf", _logsf)
sf: Final = _named("sf", _sf)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """exp(logpdf)."""
    return lax.exp(logpdf(x, a, b, loc, scale))
