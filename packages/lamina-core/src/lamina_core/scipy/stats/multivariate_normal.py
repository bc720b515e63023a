"""`jax.scipy.stats.multivariate_normal`: the normal distribution with mean `mean` and
covariance `cov` (a scalar, or a matrix factored by Cholesky), over the last axis of `x`.

With a matrix `cov` the jaxpr differs from JAX's in `jnp.diagonal` (JAX 0.10.2 stages a
platform-dependent `cond` there); the values agree."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.lax import linalg as lax_linalg
from lamina_core.numpy import promote_dtypes_inexact, shape_of

Array = Any


def logpdf(x: Any, mean: Any, cov: Any, allow_singular: None = None) -> Array:
    """-(y^T cov^-1 y + n log(2 pi) + log det cov) / 2, y = x - mean, by cov's Cholesky
    factor L: y^T cov^-1 y = |L^-1 y|^2 and log det cov = 2 sum log diag(L)."""
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = promote_dtypes_inexact(x, mean, cov)
    if not shape_of(mean):
        return -1 / 2 * jnp.square(x - mean) / cov - 1 / 2 * (jnp.log(2 * np.pi) + jnp.log(cov))
    n = shape_of(mean)[-1]
    if not np.shape(cov):
        y = x - mean
        quadratic = jnp.einsum("...i,...i->...", y, y)
        return -1 / 2 * quadratic / cov - n / 2 * (jnp.log(2 * np.pi) + jnp.log(cov))
    if len(shape_of(cov)) < 2 or shape_of(cov)[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    factor = lax_linalg.cholesky(cov)
    solve = partial(lax_linalg.triangular_solve, lower=True, transpose_a=True)
    y = jnp.vectorize(solve, signature="(n,n),(n)->(n)")(factor, x - mean)
    quadratic = jnp.einsum("...i,...i->...", y, y)
    return (
        -1 / 2 * quadratic
        - n / 2 * jnp.log(2 * np.pi)
        - jnp.log(jnp.diagonal(factor, axis1=-1, axis2=-2)).sum(-1)
    )


def pdf(x: Any, mean: Any, cov: Any) -> Array:
    """exp(logpdf)."""
    return lax.exp(logpdf(x, mean, cov))
