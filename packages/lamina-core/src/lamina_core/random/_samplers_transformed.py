"""Samplers that transform other samplers' draws: `rademacher`, `weibull_min`, `rayleigh`,
`pareto`, `lognormal`, `triangular`, `wald` and `geometric`, each with JAX 0.10.2's algorithm
in a jitted kernel of JAX's name and static arguments. JAX's `_lognormal` and `_triangular`
are `jit(inline=True)`, which stages their bodies into the caller: here they are
`inline_kernel`s, which stage the same equations from a cached trace.

Distribution parameters broadcast against `shape` (default: their broadcast shape). JAX's
check that a parameter casts safely to `dtype` is not made yet.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any, Final

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.ir import NamedSharding, PartitionSpec, canonicalize_sharding, dtypes
from lamina_core.lax import canonical_shape
from lamina_core.numpy import lax_const as _const
from lamina_core.numpy import linalg, promote_dtypes_inexact
from lamina_core.random._inline import inline_kernel
from lamina_core.random._keys import check_prng_key, split_typed, unstack
from lamina_core.random._samplers import _check_shape, _user_dtype, bernoulli, normal, uniform
from lamina_core.random._samplers_more import _float_dtype, exponential
from lamina_core.random._sharded import sampled, sampler_sharding
from lamina_core.transforms import Jitted

Array = Any


def _broadcast_shape(name: str, shape: Sequence[int] | None, *args: Any) -> tuple[int, ...]:
    arg_shapes = [np.shape(a) for a in args]
    if shape is None:
        return tuple(np.broadcast_shapes(*arg_shapes)) if arg_shapes else ()
    shp = canonical_shape(shape)
    _check_shape(name, shp, *arg_shapes)
    return shp


def rademacher(
    key: Any, shape: Sequence[int] = (), dtype: Any = None, *, out_sharding: Any = None
) -> Array:
    """-1 or +1 with equal probability, of an integer `dtype` (default int32)."""
    typed, _ = check_prng_key("rademacher", key)
    dt = _user_dtype(dtype, int)
    shp = canonical_shape(shape)
    sharding = sampler_sharding(out_sharding, "rademacher", shp)
    return _rademacher(typed, shp, dt, sharding)


@partial(Jitted, static_argnums=(1, 2, 3))
def _rademacher(key: Array, shape: tuple[int, ...], dtype: Any, out_sharding: Any) -> Array:
    samples = jnp.astype(bernoulli(key, 0.5, shape, out_sharding=out_sharding), dtype)
    return jnp.astype(2 * samples - 1, dtype)


def weibull_min(
    key: Any, scale: Any, concentration: Any, shape: Sequence[int] = (), dtype: Any = None
) -> Array:
    """Weibull values by inverting the CDF of a uniform draw."""
    typed, _ = check_prng_key("weibull_min", key)
    dt = _float_dtype("weibull_min", dtype)
    return _weibull_min(typed, scale, concentration, canonical_shape(shape), dt)


@partial(Jitted, static_argnums=(3, 4))
def _weibull_min(
    key: Array, scale: Any, concentration: Any, shape: tuple[int, ...], dtype: Any
) -> Array:
    u = uniform(key, shape, dtype, minval=0, maxval=1)
    return jnp.power(-jnp.log1p(-u), 1.0 / concentration) * scale


def rayleigh(
    key: Any,
    scale: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Array:
    """Rayleigh values of `scale`."""
    typed, _ = check_prng_key("rayleigh", key)
    dt = _float_dtype("rayleigh", dtype)
    shp = _broadcast_shape("rayleigh", shape, scale)
    sharding = sampler_sharding(out_sharding, "rayleigh", shp)
    return sampled(sharding, lambda k, v: _rayleigh(k, v, shp, dt), typed, scale)


@partial(Jitted, static_argnums=(2, 3))
def _rayleigh(key: Array, scale: Any, shape: tuple[int, ...], dtype: Any) -> Array:
    u = uniform(key, shape, dtype)
    scale = jnp.broadcast_to(jnp.astype(scale, dtype), shape)
    log_u = lax.log(u)
    sqrt_u = lax.sqrt(lax.mul(log_u, _const(scale, -2)))
    return lax.mul(scale, sqrt_u)


def pareto(
    key: Any,
    b: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Array:
    """Pareto values of shape parameter `b`."""
    typed, _ = check_prng_key("pareto", key)
    dt = _float_dtype("pareto", dtype)
    shp = _broadcast_shape("pareto", shape, b)
    sharding = sampler_sharding(out_sharding, "pareto", shp)
    return sampled(sharding, lambda k, v: _pareto(k, v, shp, dt), typed, b)


@partial(Jitted, static_argnums=(2, 3))
def _pareto(key: Array, b: Any, shape: tuple[int, ...], dtype: Any) -> Array:
    b = lax.convert_element_type(b, dtype)
    e = exponential(key, shape, dtype)
    return lax.exp(e / b)


_ONE: Final = np.float32(1)
"""JAX's default `sigma` of `lognormal`: a float32 one."""


def lognormal(
    key: Any,
    sigma: Any = _ONE,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Array:
    """exp of normal values scaled by `sigma`."""
    typed, _ = check_prng_key("lognormal", key)
    dt = _user_dtype(dtype, float)
    if not dtypes.issubdtype(dt, np.inexact):
        raise ValueError(
            f"dtype argument to `lognormal` must be a float or complex dtype, got {dt}"
        )
    shp = _broadcast_shape("lognormal", shape, sigma)
    sharding = canonicalize_sharding(out_sharding, "lognormal")
    return sampled(sharding, lambda k, s: _lognormal(k, s, shp, dt), typed, sigma)


@inline_kernel(2, 3)
def _lognormal(key: Array, sigma: Any, shape: tuple[int, ...], dtype: Any) -> Array:
    sigma = lax.convert_element_type(sigma, dtype)
    return lax.exp(normal(key, shape, dtype) * sigma)


def triangular(
    key: Any, left: Any, mode: Any, right: Any, shape: Sequence[int] | None = None,
    dtype: Any = None, *, out_sharding: Any = None,
) -> Array:  # fmt: skip
    """Triangular values on `[left, right]` peaking at `mode`."""
    typed, _ = check_prng_key("triangular", key)
    dt = _float_dtype("triangular", dtype)
    shp = _broadcast_shape("triangular", shape, left, mode, right)
    sharding = sampler_sharding(out_sharding, "triangular", shp)
    draw = lambda k, lo, mo, hi: _triangular(k, lo, mo, hi, shp, dt)  # noqa: E731
    return sampled(sharding, draw, typed, left, mode, right)


@inline_kernel(4, 5)
def _triangular(
    key: Array, left: Any, mode: Any, right: Any, shape: tuple[int, ...], dtype: Any
) -> Array:
    left = jnp.broadcast_to(lax.convert_element_type(left, dtype), shape)
    right = jnp.broadcast_to(lax.convert_element_type(right, dtype), shape)
    mode = jnp.broadcast_to(lax.convert_element_type(mode, dtype), shape)
    fc = (mode - left) / (right - left)
    u = uniform(key, shape, dtype)
    out1 = left + lax.sqrt(u * (right - left) * (mode - left))
    out2 = right - lax.sqrt((1 - u) * (right - left) * (right - mode))
    return lax.select(u < fc, out1, out2)


def wald(
    key: Any,
    mean: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Array:
    """Wald (inverse Gaussian) values of `mean`."""
    typed, _ = check_prng_key("wald", key)
    dt = _float_dtype("wald", dtype)
    shp = _broadcast_shape("wald", shape, mean)
    sharding = canonicalize_sharding(out_sharding, "wald")
    return sampled(sharding, lambda k, v: _wald(k, v, shp, dt), typed, mean)


@partial(Jitted, static_argnums=(2, 3))
def _wald(key: Array, mean: Any, shape: tuple[int, ...], dtype: Any) -> Array:
    k1, k2 = unstack(split_typed(key, 2))
    mean = jnp.broadcast_to(jnp.astype(mean, dtype), shape)
    v = normal(k1, shape, dtype)
    z = uniform(k2, shape, dtype)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    sqrt_term = lax.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return lax.select(lax.le(z, mean / (mean + x)), x, mean_sq / x)


def geometric(
    key: Any,
    p: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Array:
    """The number of Bernoulli(`p`) trials to the first success, of an integer `dtype`."""
    typed, _ = check_prng_key("geometric", key)
    dt = _user_dtype(dtype, int)
    if not dtypes.issubdtype(dt, np.integer):
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dt}")
    shp = _broadcast_shape("geometric", shape, p)
    sharding = sampler_sharding(out_sharding, "geometric", shp)
    return _geometric(typed, p, shp, dt, sharding)


@partial(Jitted, static_argnums=(2, 3, 4))
def _geometric(key: Array, p: Any, shape: tuple[int, ...], dtype: Any, out_sharding: Any) -> Array:
    (p,) = promote_dtypes_inexact(p)
    u = uniform(key, shape, p.dtype, out_sharding=out_sharding)
    # u == 0 maps to 1, avoiding log(0) without changing other samples (as JAX does).
    u = jnp.where(u == 0, 1, u)
    log_u = lax.log(u)
    log_one_minus_p = jnp.broadcast_to(lax.log1p(-p), shape, out_sharding=out_sharding)
    g = lax.floor(lax.div(log_u, log_one_minus_p)) + 1
    return jnp.astype(g, dtype)


# --- maxwell and double_sided_maxwell -------------------------------------------------------


def maxwell(
    key: Any, shape: Sequence[int] = (), dtype: Any = None, *, out_sharding: Any = None
) -> Array:
    """Maxwell variates: the length of a standard normal 3-vector."""
    typed, _ = check_prng_key("maxwell", key)
    dt = _float_dtype("maxwell", dtype)
    shp = canonical_shape(shape)
    return _maxwell(typed, shp, dt, sampler_sharding(out_sharding, "maxwell", shp))


@partial(Jitted, static_argnums=(1, 2, 3))
def _maxwell(key: Array, shape: tuple[int, ...], dtype: Any, out_sharding: Any) -> Array:
    if out_sharding is not None:  # the 3-vectors' axis is not split
        spec = out_sharding.spec
        spec = PartitionSpec(*spec.partitions, None, unreduced=spec.unreduced, reduced=spec.reduced)
        out_sharding = NamedSharding(out_sharding.mesh, spec)
    norm_rvs = normal(key, (*shape, 3), dtype, out_sharding=out_sharding)
    return linalg.norm(norm_rvs, axis=-1)


def double_sided_maxwell(
    key: Any, loc: Any, scale: Any, shape: Sequence[int] = (), dtype: Any = None
) -> Array:
    """Maxwell variates with a random sign, scaled by `scale` around `loc`."""
    typed, _ = check_prng_key("double_sided_maxwell", key)
    dt = _float_dtype("double_sided_maxwell", dtype)
    return _double_sided_maxwell(typed, loc, scale, canonical_shape(shape), dt)


@partial(Jitted, static_argnums=(3, 4))
def _double_sided_maxwell(
    key: Array, loc: Any, scale: Any, shape: tuple[int, ...], dtype: Any
) -> Array:
    params_shapes = tuple(np.broadcast_shapes(np.shape(loc), np.shape(scale)))
    if not shape:
        shape = params_shapes
    shape = shape + params_shapes
    maxwell_key, rademacher_key = unstack(split_typed(key))
    maxwell_rvs = maxwell(maxwell_key, shape=shape, dtype=dtype)
    random_sign = rademacher(rademacher_key, shape=shape, dtype=dtype)
    return random_sign * maxwell_rvs * scale + loc
