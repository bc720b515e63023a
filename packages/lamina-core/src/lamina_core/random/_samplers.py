"""Samplers: values of a distribution from a key, with JAX 0.10.2's algorithms.

Each public sampler checks its arguments and calls a jitted kernel named as JAX's (`_uniform`,
`_normal`, `_normal_real`, `_bernoulli`, `_randint`), with the same static arguments, so its
jaxpr prints as JAX's and the same key gives the same bits and the same values.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any, Final

import numpy as np

from lamina_core import lax
from lamina_core.ir import canonicalize_sharding, dtypes
from lamina_core.lax import canonical_shape
from lamina_core.random._keys import check_prng_key, random_bits, split_typed, unstack
from lamina_core.random._sharded import sampled, sampler_sharding
from lamina_core.trace import typeof
from lamina_core.transforms import Jitted

Array = Any

UINT_DTYPES: Final[dict[int, np.dtype]] = {n: np.dtype(f"uint{n}") for n in (8, 16, 32, 64)}


def _user_dtype(dtype: Any, default: type) -> np.dtype:
    return dtypes.canonicalize_dtype(default if dtype is None else dtype)


def _check_shape(name: str, shape: tuple[int, ...], *param_shapes: tuple[int, ...]) -> None:
    if not param_shapes:
        return
    try:
        joined = np.broadcast_shapes(shape, *param_shapes)
    except ValueError:
        joined = None
    if joined != shape:
        raise ValueError(
            f"{name} parameter shapes must be broadcast-compatible with shape argument, and "
            f"the result of broadcasting the shapes must equal the shape argument, but got "
            f"result {joined} for shape argument {shape}."
        )


def _broadcast_to_rank(x: Array, rank: int) -> Array:
    ndim = len(typeof(x).shape)  # type: ignore[attr-defined]  # an array
    return x if ndim == rank else lax.broadcast(x, (1,) * (rank - ndim))


# --- uniform -------------------------------------------------------------------------------


def uniform(
    key: Any,
    shape: Sequence[int] = (),
    dtype: Any = None,
    minval: Any = 0.0,
    maxval: Any = 1.0,
    *,
    out_sharding: Any = None,
) -> Array:
    """Uniform values in `[minval, maxval)` of `shape` and a float `dtype` (default float32,
    float64 with x64)."""
    typed, _ = check_prng_key("uniform", key)
    dt = _user_dtype(dtype, float)
    shp = canonical_shape(shape)
    sharding = sampler_sharding(out_sharding, "uniform", shp)
    if not dtypes.issubdtype(dt, np.floating):
        raise ValueError(f"dtype argument to `uniform` must be a float dtype, got {dt}")
    draw = lambda k, lo, hi: _uniform(k, lo, hi, shp, dt)  # noqa: E731
    return sampled(sharding, draw, typed, minval, maxval)


@partial(Jitted, static_argnums=(3, 4))
def _uniform(key: Array, minval: Any, maxval: Any, shape: tuple[int, ...], dtype: Any) -> Array:
    _check_shape("uniform", shape)
    minval = lax.convert_element_type(minval, dtype)
    maxval = lax.convert_element_type(maxval, dtype)
    minval = _broadcast_to_rank(minval, len(shape))
    maxval = _broadcast_to_rank(maxval, len(shape))
    finfo = dtypes.finfo(dtype)
    nbits, nmant = int(finfo.bits), int(finfo.nmant)
    if nbits not in (8, 16, 32, 64):
        raise TypeError(f"uniform only accepts 8-, 16-, 32-, or 64-bit dtypesgot {dtype}.")
    rng_bits = 8 if nmant < 8 else nbits
    bits = random_bits(key, rng_bits, shape)
    uint_dtype = UINT_DTYPES[nbits]
    if rng_bits != nbits:
        bits = lax.convert_element_type(bits, uint_dtype)
    # Random mantissa bits under the exponent of 1.0 give a float in [1, 2).
    float_bits = lax.shift_right_logical(bits, np.asarray(rng_bits - nmant, uint_dtype))
    one_bits = np.array(1.0, np.dtype(dtype)).view(uint_dtype)
    float_bits = lax.bitwise_or(float_bits, one_bits)
    floats = lax.bitcast_convert_type(float_bits, dtype) - np.array(1.0, dtype)
    return lax.max(minval, lax.reshape(floats * (maxval - minval) + minval, shape))


# --- normal --------------------------------------------------------------------------------


def normal(
    key: Any, shape: Sequence[int] = (), dtype: Any = None, *, out_sharding: Any = None
) -> Array:
    """Standard normal values of `shape` and a float (or complex) `dtype`."""
    typed, _ = check_prng_key("normal", key)
    shp = canonical_shape(shape)
    sharding = sampler_sharding(out_sharding, "normal", shp)
    dt = _user_dtype(dtype, float)
    if not dtypes.issubdtype(dt, np.inexact):
        raise ValueError(f"dtype argument to `normal` must be a float or complex dtype, got {dt}")
    return sampled(sharding, lambda k: _normal(k, shp, dt), typed)


@partial(Jitted, static_argnums=(1, 2))
def _normal(key: Array, shape: tuple[int, ...], dtype: Any) -> Array:
    if dtypes.issubdtype(dtype, np.complexfloating):
        sqrt2 = np.array(np.sqrt(2), dtype)
        key_re, key_im = unstack(split_typed(key))
        real_dtype = np.array(0, dtype).real.dtype
        re = _normal_real(key_re, shape, real_dtype).astype(dtype)
        im = _normal_real(key_im, shape, real_dtype).astype(dtype)
        return (re + 1j * im) / sqrt2
    return _normal_real(key, shape, dtype)


@partial(Jitted, static_argnums=(1, 2))
def _normal_real(key: Array, shape: tuple[int, ...], dtype: Any) -> Array:
    _check_shape("normal", shape)
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype), dtype=dtype)
    hi = np.array(1.0, dtype)
    u = uniform(key, shape, dtype, lo, hi)
    return lax.mul(np.array(np.sqrt(2), dtype), lax.erf_inv(u))


# --- bernoulli -----------------------------------------------------------------------------


def bernoulli(
    key: Any,
    p: Any = 0.5,
    shape: Sequence[int] | None = None,
    mode: str = "low",
    *,
    out_sharding: Any = None,
) -> Array:
    """Booleans that are True with probability `p`, of `shape` (default `p`'s shape)."""
    shp = None if shape is None else canonical_shape(shape)
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    typed, _ = check_prng_key("bernoulli", key)
    sharding = canonicalize_sharding(out_sharding, "bernoulli")
    dtype = dtypes.dtype(p, canonicalize=True)
    if not dtypes.issubdtype(dtype, np.floating):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {dtype}.")
    p = lax.convert_element_type(p, dtype)
    draw = lambda k, p_: _bernoulli(k, p_, shape=shp, mode=mode)  # noqa: E731
    return sampled(sharding, draw, typed, p)


@partial(Jitted, static_argnames=("shape", "mode"))
def _bernoulli(key: Array, p: Array, shape: tuple[int, ...] | None, mode: str) -> Array:
    p_shape = tuple(typeof(p).shape)  # type: ignore[attr-defined]  # an array
    if shape is None:
        shape = p_shape
    else:
        _check_shape("bernoulli", shape, p_shape)
    dtype = typeof(p).dtype  # type: ignore[attr-defined]  # an array
    if mode == "high":
        u1, u2 = unstack(uniform(key, (2, *shape), dtype))
        u2 = u2 * 2 ** -int(dtypes.finfo(dtype).nmant)
        return u2 < p - u1
    return uniform(key, shape, dtype) < p


__all__ = ["bernoulli", "normal", "uniform"]
