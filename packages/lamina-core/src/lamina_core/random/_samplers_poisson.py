"""`poisson`, with JAX 0.10.2's algorithm: Knuth's multiplication of uniforms for rates below
10, Hormann's transformed rejection above, both as `while` loops over the whole array (each
runs until every element is done), selected per element."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.ir import dtypes
from lamina_core.lax import canonical_shape
from lamina_core.random._keys import check_prng_key, split_typed, unstack
from lamina_core.random._primitives import key_impl_of, threefry_prng_impl
from lamina_core.random._samplers import _user_dtype, uniform
from lamina_core.random._sharded import sampled, sampler_sharding
from lamina_core.trace import typeof
from lamina_core.transforms import Jitted

Array = Any


def poisson(
    key: Any,
    lam: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Array:
    """Poisson variates with rate `lam`, of an integer `dtype` (default int32)."""
    typed, _ = check_prng_key("poisson", key)
    dt = _user_dtype(dtype, int)
    impl = key_impl_of(typeof(typed).dtype)  # type: ignore[attr-defined]  # a key array
    if impl is not threefry_prng_impl:
        raise NotImplementedError(
            f"`poisson` is only implemented for the threefry2x32 RNG, not {impl}"
        )
    shp = canonical_shape(shape) if shape is not None else tuple(np.shape(lam))
    sharding = sampler_sharding(out_sharding, "poisson", shp)
    lam = jnp.broadcast_to(lam, shp)
    lam = lax.convert_element_type(lam, np.float32)
    return sampled(sharding, lambda k, la: _poisson(k, la, shp, dt), typed, lam)


@partial(Jitted, static_argnums=(2, 3, 4))
def _poisson_knuth(
    key: Array, lam: Array, shape: tuple[int, ...], dtype: Any, max_iters: Any
) -> Array:
    def body_fn(carry: Any) -> Any:
        i, k, rng, log_prod = carry
        rng, subkey = unstack(split_typed(rng))
        k = lax.select(log_prod > -lam, k + 1, k)
        u = uniform(subkey, shape, np.float32)
        return i + 1, k, rng, log_prod + jnp.log(u)

    def cond_fn(carry: Any) -> Any:
        i, log_prod = carry[0], carry[3]
        return (log_prod > -lam).any() & (i < max_iters)

    k_init = lax.full_like(lam, 0, dtype, shape)
    log_rate_init = lax.full_like(lam, 0, np.float32, shape)
    k = lax.while_loop(cond_fn, body_fn, (0, k_init, key, log_rate_init))[1]
    return (k - 1).astype(dtype)


@partial(Jitted, static_argnums=(2, 3, 4))
def _poisson_rejection(
    key: Array, lam: Array, shape: tuple[int, ...], dtype: Any, max_iters: Any
) -> Array:
    log_lam = lax.log(lam)
    b = 0.931 + 2.53 * lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)
    lam_dtype = typeof(lam).dtype  # type: ignore[attr-defined]  # an array

    def body_fn(carry: Any) -> Any:
        i, k_out, accepted, key = carry
        key, subkey_0, subkey_1 = unstack(split_typed(key, 3))
        u = uniform(subkey_0, shape, lam_dtype) - 0.5
        v = uniform(subkey_1, shape, lam_dtype)
        u_shifted = 0.5 - abs(u)
        k = lax.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = lax.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - lax.lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept2 = s <= t
        accept = accept1 | (~reject & accept2)
        k_out = lax.select(accept, k, k_out)
        accepted |= accept
        return i + 1, k_out, accepted, key

    def cond_fn(carry: Any) -> Any:
        i, _, accepted, _ = carry
        return (~accepted).any() & (i < max_iters)

    k_init = lax.full_like(lam, -1, lam_dtype, shape)
    accepted = lax.full_like(lam, False, np.dtype("bool"), shape)
    k = lax.while_loop(cond_fn, body_fn, (0, k_init, accepted, key))[1]
    return k.astype(dtype)


@partial(Jitted, static_argnums=(2, 3))
def _poisson(key: Array, lam: Array, shape: tuple[int, ...], dtype: Any) -> Array:
    # Knuth below a rate of 10, rejection above (as TensorFlow and NumPy).
    use_knuth = lax.ne(lam, lam) | (lam < 10)
    lam_knuth = lax.select(use_knuth, lam, lax.full_like(lam, 0.0))
    # The rejection method's acceptance tops out near 89%: any large rate will do.
    lam_rejection = lax.select(use_knuth, lax.full_like(lam, 1e5), lam)
    max_iters = dtype.type(dtypes.iinfo(dtype).max)  # far more trips than ever needed
    result = lax.select(
        use_knuth,
        _poisson_knuth(key, lam_knuth, shape, dtype, max_iters),
        _poisson_rejection(key, lam_rejection, shape, dtype, max_iters),
    )
    return lax.select(lam == 0, jnp.zeros_like(result), result)


__all__ = ["poisson"]
