"""Samplers built on matrix factorizations: `multivariate_normal` (a factor of the covariance
times standard normal draws) and `orthogonal` (Haar-distributed orthogonal or unitary matrices
from the QR decomposition of normal draws), with JAX 0.10.2's algorithms in jitted kernels of
JAX's names and static arguments, so jaxprs print as JAX's and values match bit for bit.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from functools import partial
from typing import Any, Final

import numpy as np

from lamina_core import numpy as jnp
from lamina_core.ir import dtypes
from lamina_core.lax import canonical_shape
from lamina_core.numpy import einsum, linalg, promote_dtypes_inexact, rank_promotion
from lamina_core.random._keys import check_prng_key
from lamina_core.random._samplers import _check_shape, _user_dtype, normal
from lamina_core.random._sharded import sampled, sampler_sharding
from lamina_core.trace import ConcretizationTypeError, Tracer
from lamina_core.transforms import Jitted

Array = Any

_METHODS = ("svd", "eigh", "cholesky")


def multivariate_normal(
    key: Any,
    mean: Any,
    cov: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    method: str = "cholesky",
    *,
    out_sharding: Any = None,
) -> Array:
    """Normal vectors of mean `mean` (`(..., n)`) and covariance `cov` (`(..., n, n)`), of batch
    shape `shape` (default: the broadcast batch shape of `mean` and `cov`); the covariance's
    factor comes from `method`: 'cholesky' (default), 'eigh' or 'svd' (for singular `cov`)."""
    typed, _ = check_prng_key("multivariate_normal", key)
    mean, cov = promote_dtypes_inexact(mean, cov)
    if method not in _METHODS:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    dt = mean.dtype if dtype is None else _user_dtype(dtype, float)
    if not dtypes.issubdtype(dt, np.floating):
        raise ValueError(f"dtype argument to `multivariate_normal` must be a float dtype, got {dt}")
    shp = None if shape is None else canonical_shape(shape)
    sharding = sampler_sharding(out_sharding, "multivariate_normal", shp or ())
    draw = lambda k, mu, sigma: _multivariate_normal(  # noqa: E731
        k, mu, sigma, shape=shp, dtype=dt, method=method
    )
    return sampled(sharding, draw, typed, mean, cov)


@partial(Jitted, static_argnums=(3, 4, 5))
def _multivariate_normal(
    key: Array, mean: Array, cov: Array, shape: tuple[int, ...] | None, dtype: Any, method: str
) -> Array:
    if not np.ndim(mean) >= 1:
        raise ValueError(
            f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == {np.ndim(mean)}"
        )
    if not np.ndim(cov) >= 2:
        raise ValueError(
            f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == {np.ndim(cov)}"
        )
    n = mean.shape[-1]
    if np.shape(cov)[-2:] != (n, n):
        raise ValueError(
            f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
            f"but got cov.shape == {np.shape(cov)}."
        )
    if shape is None:
        shape = tuple(np.broadcast_shapes(mean.shape[:-1], cov.shape[:-2]))
    else:
        _check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
    if method == "svd":
        u, s, _ = linalg.svd(cov)
        factor = u * jnp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = linalg.eigh(cov)
        factor = v * jnp.sqrt(w[..., None, :])
    else:
        factor = linalg.cholesky(cov)
    samples = normal(key, (*shape, *mean.shape[-1:]), dtype)
    with rank_promotion("allow"):  # as JAX's: the mean broadcasts over the batch
        return mean + einsum("...ij,...j->...i", factor, samples)


def orthogonal(
    key: Any,
    n: int,
    shape: Sequence[int] = (),
    dtype: Any = None,
    m: int | None = None,
    *,
    out_sharding: Any = None,
) -> Array:
    """A Haar-random `(*shape, n, m)` matrix (`m` defaults to `n`) with orthonormal rows
    (n <= m) or columns (m <= n); unitary for a complex `dtype`."""
    m_ = n if m is None else m
    shp = canonical_shape(shape)
    typed, _ = check_prng_key("orthogonal", key)
    dt = _user_dtype(dtype, float)
    _check_shape("orthogonal", shp)
    n_, m_ = _concrete_index(n), _concrete_index(m_)
    sharding = sampler_sharding(out_sharding, "orthogonal", shp)
    draw = lambda k: _orthogonal(k, n=n_, _m=m_, shape=shp, dtype=dt)  # noqa: E731
    return sampled(sharding, draw, typed)


def _concrete_index(v: Any) -> int:
    if isinstance(v, Tracer):
        raise ConcretizationTypeError(
            "Abstract tracer value encountered where concrete value is expected\n"
            "The error occurred in jax.random.orthogonal()"
        )
    return operator.index(v)


@partial(Jitted, static_argnums=(1, 2, 3, 4))
def _orthogonal(key: Array, n: int, _m: int, shape: tuple[int, ...], dtype: Any) -> Array:
    z = normal(key, (*shape, max(n, _m), min(n, _m)), dtype)
    q, r = linalg.qr(z)
    d = diagonal(r)
    x = q * jnp.expand_dims(jnp.sign(d), -2)
    return linalg.matrix_transpose(x) if n < _m else x


def _diagonal(a: Array) -> Array:
    # The main diagonal of the last two axes, staged as JAX's jitted `jnp.diagonal` on a batch
    # of matrices (an arange gather); for one square matrix JAX stages a `platform_dependent`
    # whose CPU branch is this same gather.
    size = min(a.shape[-2:])
    i = jnp.arange(size)
    return a[..., i, jnp.arange(size)]


_diagonal.__name__ = _diagonal.__qualname__ = "diagonal"
diagonal: Final = Jitted(_diagonal)


__all__ = ["multivariate_normal", "orthogonal"]
