"""More samplers: `randint`, `truncated_normal`, `exponential`, `laplace`, `logistic`,
`cauchy` and `gumbel`, each JAX 0.10.2's algorithm in a jitted kernel of JAX's name.

All but `randint` transform one `uniform` draw; `randint` draws twice as many bits as its
dtype has (from the two halves of a split key) and reduces them modulo the span.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.ir import canonicalize_sharding, dtypes
from lamina_core.lax import canonical_shape
from lamina_core.numpy import lax_const as _const
from lamina_core.random._keys import check_prng_key, random_bits, split_typed, unstack
from lamina_core.random._samplers import (
    UINT_DTYPES,
    _broadcast_to_rank,
    _check_shape,
    _uniform,
    _user_dtype,
    uniform,
)
from lamina_core.random._sharded import sampled, sampler_sharding
from lamina_core.trace import typeof
from lamina_core.transforms import Jitted

Array = Any


def _dtype_of(x: Any) -> np.dtype:
    dtype: np.dtype = typeof(x).dtype  # type: ignore[attr-defined]  # an array
    return dtype


def _float_dtype(name: str, dtype: Any) -> np.dtype:
    dt = _user_dtype(dtype, float)
    if not dtypes.issubdtype(dt, np.floating):
        raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {dt}")
    return dt


# --- randint -------------------------------------------------------------------------------


def _convert_and_clip_integer(val: Array, dtype: np.dtype) -> Array:
    """`val` in integer `dtype`, clipped to its range instead of wrapping."""
    have = _dtype_of(val)
    lo = _const(val, max(int(dtypes.iinfo(dtype).min), int(dtypes.iinfo(have).min)))
    hi = _const(val, min(int(dtypes.iinfo(dtype).max), int(dtypes.iinfo(have).max)))
    return lax.convert_element_type(jnp.clip(val, lo, hi), dtype)


def randint(
    key: Any,
    shape: Sequence[int],
    minval: Any,
    maxval: Any,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Array:
    """Integers in `[minval, maxval)` of `shape` and an integer `dtype` (default int32)."""
    typed, _ = check_prng_key("randint", key)
    dt = _user_dtype(dtype, int)
    shp = canonical_shape(shape)
    sharding = sampler_sharding(out_sharding, "randint", shp)
    if not dtypes.issubdtype(dt, np.integer):
        raise TypeError(f"randint only accepts integer dtypes, got {dt}")
    info = dtypes.iinfo(dt)
    sampling = dt
    if int(info.bits) < 32:
        # Narrow integers are drawn as int32, whose wider span makes them less biased.
        sampling = np.dtype("int32")
        low, high = int(info.min), int(info.max)
        # `x.clip(lo, hi)` in JAX: the bounds reach the jitted clip as keywords.
        minval = jnp.clip(jnp.astype(jnp.asarray(minval), "int32"), min=low, max=high)
        maxval = jnp.clip(jnp.astype(jnp.asarray(maxval), "int32"), min=low, max=high + 1)
    draw = lambda k, lo, hi: _randint(k, lo, hi, shp, sampling)  # noqa: E731
    return jnp.astype(sampled(sharding, draw, typed, minval, maxval), dt)


@partial(Jitted, static_argnums=(3, 4))
def _randint(key: Array, minval: Any, maxval: Any, shape: tuple[int, ...], dtype: Any) -> Array:
    _check_shape("randint", shape, np.shape(minval), np.shape(maxval))
    minval, maxval = jnp.asarray(minval), jnp.asarray(maxval)
    if not dtypes.issubdtype(_dtype_of(minval), np.integer):
        minval = minval.astype(int)
    if not dtypes.issubdtype(_dtype_of(maxval), np.integer):
        maxval = maxval.astype(int)
    top = jnp.array(dtypes.iinfo(dtype).max, dtype)
    maxval_out_of_range = lax.gt(maxval, _convert_and_clip_integer(top, _dtype_of(maxval)))
    minval = _convert_and_clip_integer(minval, dtype)
    maxval = _convert_and_clip_integer(maxval, dtype)
    minval = _broadcast_to_rank(minval, len(shape))
    maxval = _broadcast_to_rank(maxval, len(shape))
    nbits = int(dtypes.iinfo(dtype).bits)
    if nbits not in (8, 16, 32, 64):
        raise TypeError(f"randint only accepts 8-, 16-, 32-, or 64-bit dtypes, got {dtype}")
    k1, k2 = unstack(split_typed(key))
    higher_bits, lower_bits = random_bits(k1, nbits, shape), random_bits(k2, nbits, shape)
    unsigned = UINT_DTYPES[nbits]
    span = lax.convert_element_type(maxval - minval, unsigned)
    # An empty range gives minval; a maxval beyond the dtype widens the span by one.
    empty = maxval <= minval
    span = lax.select(empty, lax.full(typeof(span).shape, 1, unsigned), span)  # type: ignore[attr-defined]  # an array
    span = lax.select(maxval_out_of_range & (maxval > minval), lax.add(span, _const(span, 1)), span)
    # 2**nbits % span without overflow: (a * b) % n == ((a % n) * (b % n)) % n.
    multiplier = lax.rem(_const(span, 2 ** (nbits // 2)), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(lax.mul(lax.rem(higher_bits, span), multiplier), lax.rem(lower_bits, span))
    offset = lax.rem(offset, span)
    return lax.add(minval, lax.convert_element_type(offset, dtype))


# --- truncated_normal ----------------------------------------------------------------------


def truncated_normal(
    key: Any,
    lower: Any,
    upper: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Array:
    """Standard normal values conditioned on `(lower, upper)`."""
    shp = None if shape is None else canonical_shape(shape)
    typed, _ = check_prng_key("truncated_normal", key)
    sharding = canonicalize_sharding(out_sharding, "truncated_normal")
    dt = _float_dtype("truncated_normal", dtype)
    draw = lambda k, lo, hi: _truncated_normal(k, lo, hi, shp, dt)  # noqa: E731
    return sampled(sharding, draw, typed, lower, upper)


@partial(Jitted, static_argnums=(3, 4))
def _truncated_normal(
    key: Array, lower: Any, upper: Any, shape: tuple[int, ...] | None, dtype: Any
) -> Array:
    if shape is None:
        shape = tuple(np.broadcast_shapes(np.shape(lower), np.shape(upper)))
    else:
        _check_shape("truncated_normal", shape, np.shape(lower), np.shape(upper))
    sqrt2 = np.array(np.sqrt(2), dtype)
    lower = lax.convert_element_type(lower, dtype)
    upper = lax.convert_element_type(upper, dtype)
    a = lax.erf(lower / sqrt2)
    b = lax.erf(upper / sqrt2)
    u = uniform(key, shape, dtype, minval=a, maxval=b)
    out = sqrt2 * lax.erf_inv(u)
    # Rounding (or u == a) may land on a bound: clamp into the open interval.
    return jnp.clip(
        out,
        lax.nextafter(lax.stop_gradient(lower), np.array(np.inf, dtype=dtype)),
        lax.nextafter(lax.stop_gradient(upper), np.array(-np.inf, dtype=dtype)),
    )


# --- transforms of one uniform draw --------------------------------------------------------


def exponential(
    key: Any, shape: Sequence[int] = (), dtype: Any = None, *, out_sharding: Any = None
) -> Array:
    """Exponential values (rate 1)."""
    typed, _ = check_prng_key("exponential", key)
    dt = _float_dtype("exponential", dtype)
    shp = canonical_shape(shape)
    sharding = sampler_sharding(out_sharding, "exponential", shp)
    return sampled(sharding, lambda k: _exponential(k, shp, dt), typed)


@partial(Jitted, static_argnums=(1, 2))
def _exponential(key: Array, shape: tuple[int, ...], dtype: Any) -> Array:
    _check_shape("exponential", shape)
    u = uniform(key, shape, dtype)
    return lax.neg(lax.log1p(lax.neg(u)))  # log of 1 - u, in (0, 1]


def laplace(
    key: Any, shape: Sequence[int] = (), dtype: Any = None, *, out_sharding: Any = None
) -> Array:
    """Laplace values (location 0, scale 1)."""
    typed, _ = check_prng_key("laplace", key)
    dt = _float_dtype("laplace", dtype)
    shp = canonical_shape(shape)
    sharding = sampler_sharding(out_sharding, "laplace", shp)
    return sampled(sharding, lambda k: _laplace(k, shp, dt), typed)


@partial(Jitted, static_argnums=(1, 2))
def _laplace(key: Array, shape: tuple[int, ...], dtype: Any) -> Array:
    _check_shape("laplace", shape)
    u = uniform(key, shape, dtype, minval=-1.0 + dtypes.finfo(dtype).epsneg, maxval=1.0)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


def logistic(
    key: Any, shape: Sequence[int] = (), dtype: Any = None, *, out_sharding: Any = None
) -> Array:
    """Logistic values."""
    typed, _ = check_prng_key("logistic", key)
    dt = _float_dtype("logistic", dtype)
    shp = canonical_shape(shape)
    sharding = sampler_sharding(out_sharding, "logistic", shp)
    return sampled(sharding, lambda k: _logistic(k, shp, dt), typed)


@partial(Jitted, static_argnums=(1, 2))
def _logistic(key: Array, shape: tuple[int, ...], dtype: Any) -> Array:
    _check_shape("logistic", shape)
    x = uniform(key, shape, dtype, minval=dtypes.finfo(dtype).tiny, maxval=1.0)
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


def cauchy(
    key: Any, shape: Sequence[int] = (), dtype: Any = None, *, out_sharding: Any = None
) -> Array:
    """Cauchy values."""
    typed, _ = check_prng_key("cauchy", key)
    dt = _float_dtype("cauchy", dtype)
    shp = canonical_shape(shape)
    sharding = sampler_sharding(out_sharding, "cauchy", shp)
    return sampled(sharding, lambda k: _cauchy(k, shp, dt), typed)


@partial(Jitted, static_argnums=(1, 2))
def _cauchy(key: Array, shape: tuple[int, ...], dtype: Any) -> Array:
    _check_shape("cauchy", shape)
    u = uniform(key, shape, dtype, minval=dtypes.finfo(dtype).eps, maxval=1.0)
    pi = _const(u, np.pi)
    return lax.tan(lax.mul(pi, lax.sub(u, _const(u, 0.5))))


def gumbel(
    key: Any,
    shape: Sequence[int] = (),
    dtype: Any = None,
    mode: str | None = None,
    *,
    out_sharding: Any = None,
) -> Array:
    """Gumbel values; `mode="high"` spends twice the bits for accuracy near 1 (the default,
    None, is "low", as JAX's `jax_use_high_dynamic_range_gumbel=False`)."""
    typed, _ = check_prng_key("gumbel", key)
    dt = _float_dtype("gumbel", dtype)
    mode = "low" if mode is None else mode
    if mode not in ("high", "low"):
        # JAX's "highest" (float32 only) needs count-leading-zeros; not in Lamina yet.
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    shp = canonical_shape(shape)
    sharding = sampler_sharding(out_sharding, "gumbel", shp)
    return sampled(sharding, lambda k: _gumbel(k, shp, dt, mode), typed)


@partial(Jitted, static_argnums=(1, 2, 3))
def _gumbel(key: Array, shape: tuple[int, ...], dtype: Any, mode: str) -> Array:
    _check_shape("gumbel", shape)
    info = dtypes.finfo(dtype)
    if mode == "high":
        high, low = unstack(_uniform(key, minval=0.0, maxval=1.0, shape=(2, *shape), dtype=dtype))
        x = jnp.where(high >= 0.5, high, high + 2 ** -int(info.nmant) * low + info.tiny)
        return -jnp.log(-jnp.log1p(-x))
    u = _uniform(key, minval=info.tiny, maxval=1.0, shape=shape, dtype=dtype)
    return -jnp.log(-jnp.log(u))
