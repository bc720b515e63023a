"""`jax.scipy.stats.dirichlet`: the Dirichlet distribution of concentrations `alpha` on the
simplex (axis 0 of `x`, which may leave out the last coordinate)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.numpy import promotion as p
from lamina_core.numpy import shape_of
from lamina_core.scipy._special_gamma import gammaln
from lamina_core.scipy._special_log import xlogy

Array = Any


def _is_simplex(x: Array) -> Array:
    total = jnp.sum(x, axis=0)
    return jnp.all(x > 0, axis=0) & (abs(total - 1) < 1e-6)


def logpdf(x: Any, alpha: Any) -> Array:
    """sum((alpha - 1) log x) - log B(alpha) over axis 0; -inf off the simplex."""
    x, alpha = p.promote_dtypes_inexact(x, alpha)
    x_shape, alpha_shape = shape_of(x), shape_of(alpha)
    if len(alpha_shape) != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha_shape}")
    if x_shape[0] not in (alpha_shape[0], alpha_shape[0] - 1):
        raise ValueError(
            "`x` must have either the same number of entries as `alpha` or one entry fewer; "
            f"got x.shape={x_shape}, alpha.shape={alpha_shape}"
        )
    one = p.const(x, 1)
    if x_shape[0] != alpha_shape[0]:
        x = jnp.concatenate([x, lax.sub(one, jnp.sum(x, 0, keepdims=True))], axis=0)
    normalizer = jnp.sum(gammaln(alpha)) - gammaln(jnp.sum(alpha))
    ndim = len(shape_of(x))
    if ndim > 1:
        alpha = lax.broadcast_in_dim(alpha, (*alpha_shape, *(1,) * (ndim - 1)), (0,))
    log_probs = lax.sub(jnp.sum(xlogy(lax.sub(alpha, one), x), axis=0), normalizer)
    return jnp.where(_is_simplex(x), log_probs, -np.inf)


def pdf(x: Any, alpha: Any) -> Array:
    """exp(logpdf)."""
    return lax.exp(logpdf(x, alpha))
