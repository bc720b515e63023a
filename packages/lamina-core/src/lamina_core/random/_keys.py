"""Keys: making them (`key`, `PRNGKey`), splitting them, folding data in, drawing raw bits.

Typed keys (`key(0)`, dtype `key<fry>`) are arrays of keys; legacy keys (`PRNGKey(0)`) are
their raw data, `uint32[2]`. Every function takes either: a raw key is wrapped on the way in
(`random_wrap`) and, since JAX's `jax_enable_custom_prng` is off, the result unwrapped on the
way out, so raw keys give raw keys back, as in JAX 0.10.2.

The implementation is `jax_default_prng_impl`, and threefry's random bits and splits follow
`jax_threefry_partitionable` as it is when they are traced (True, JAX 0.10.2's default).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.config import affects_tracing, config, define_enum, enable_x64
from lamina_core.ir import ShapedArray, dtypes
from lamina_core.lax import canonical_shape
from lamina_core.random import _rbg as _rbg  # registers the rbg implementations' key operations
from lamina_core.random import _threefry_original as _threefry_original  # and threefry's
from lamina_core.random._primitives import (
    PRNGImpl,
    key_impl_of,
    layout_params,
    prng_impls,
    random_bits_p,
    random_clone_p,
    random_fold_in_p,
    random_seed_p,
    random_split_p,
    random_unwrap_p,
    random_wrap_p,
)
from lamina_core.random._sharded import sampled, sampler_sharding
from lamina_core.trace import typeof

Array = Any

default_prng_impl: Final = define_enum(
    "jax_default_prng_impl",
    ("threefry2x32", "threefry4x32", "rbg", "unsafe_rbg", "philox2x32", "philox4x32"),
    "threefry2x32",
    "The PRNG implementation of new keys: 'threefry2x32', 'rbg' or 'unsafe_rbg' (JAX's "
    "'threefry4x32', 'philox2x32' and 'philox4x32' are refused).",
)


def _check_prng_impl(name: str) -> None:
    if name not in prng_impls:
        raise NotImplementedError(
            f"config option jax_default_prng_impl={name!r} is not supported by Lamina: it "
            f"implements {', '.join(map(repr, prng_impls))}"
        )


default_prng_impl.validator = _check_prng_impl


# Staged into every seeding: part of the tracing key, as in JAX.
random_seed_offset: Final = affects_tracing(
    config.define_int(
        "jax_random_seed_offset",
        0,
        "Offset to all random seeds (e.g. argument to jax.random.key()).",
    )
)


def resolve_prng_impl(impl: Any) -> PRNGImpl:
    """The implementation `impl` names (None: the default), as JAX resolves it."""
    if impl is None:
        impl = default_prng_impl.value
    if isinstance(impl, PRNGImpl):
        return impl
    if isinstance(impl, np.dtype) and key_impl_of(impl) is not None:
        found = key_impl_of(impl)
        assert found is not None
        return found
    if type(impl) is str:
        if impl in prng_impls:
            return prng_impls[impl]
        known = ", ".join(f'"{s}"' for s in prng_impls)
        raise ValueError(
            f'unrecognized PRNG implementation "{impl}". Did you mean one of: {known}?'
        )
    raise TypeError(f"unrecognized type {type(impl)} for specifying PRNG implementation.")


def key_dtype(impl_spec: Any = None) -> np.dtype:
    """The dtype of keys of the implementation `impl_spec` (`key<fry>`)."""
    return resolve_prng_impl(impl_spec).key_type.dtype


def is_key(x: Any) -> bool:
    """Whether `x` is a typed key array."""
    aval = typeof(x)
    return isinstance(aval, ShapedArray) and key_impl_of(aval.dtype) is not None


def _is_arraylike(x: Any) -> bool:
    return (hasattr(x, "shape") and hasattr(x, "dtype")) or isinstance(x, (list, tuple, int))


def check_prng_key(name: str, key: Any, *, allow_batched: bool = False) -> tuple[Array, bool]:
    """`key` as a typed key, and whether it had to be wrapped (it was raw data)."""
    if is_key(key):
        typed, wrapped = key, False
    elif _is_arraylike(key):
        typed, wrapped = random_wrap(key, impl=resolve_prng_impl(None)), True
    else:
        raise TypeError(f"unexpected PRNG key type {type(key)}")
    shape = typeof(typed).shape  # type: ignore[attr-defined]  # a ShapedArray
    if not allow_batched and shape:
        raise ValueError(
            f"{name} accepts a single key, but was given a key array of shape "
            f"{np.shape(key) if not wrapped else tuple(shape)} != (). Use jax.vmap for batching."
        )
    return typed, wrapped


def return_keys(wrapped: bool, keys: Array) -> Array:
    """Keys as the caller gave them: raw data if they were raw."""
    return random_unwrap_p.bind(keys) if wrapped else keys


def random_wrap(base: Any, *, impl: PRNGImpl) -> Array:
    base = jnp.asarray(base)
    aval = typeof(base)
    assert isinstance(aval, ShapedArray)
    if aval.dtype != dtypes.uint32:
        raise TypeError(f"random_wrap: key data must be uint32, got {aval.dtype.name}")
    return random_wrap_p.bind(base, impl=impl)


def _seed(ctor: str, seed: Any, impl: Any) -> Array:
    prng = resolve_prng_impl(impl)
    if is_key(seed):
        raise TypeError(f"{ctor} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed):
        raise TypeError(
            f"{ctor} accepts a scalar seed, but was given an array of shape "
            f"{np.shape(seed)} != (). Use jax.vmap for batching"
        )
    # Python ints go through int64 (JAX does so to accept hashes beyond int32 with x64 off).
    seeds = jnp.asarray(np.int64(seed)) if isinstance(seed, int) else jnp.asarray(seed)
    if "jax_random_seed_offset" in config.touched and random_seed_offset.value:
        seeds = seeds + random_seed_offset.value
    return random_seed_p.bind(seeds, impl=prng)


def key(seed: Any, *, impl: Any = None, dtype: Any = None) -> Array:
    """A typed key (`key<fry>[]`) from an integer seed.

    Args:
        seed: a 32- or 64-bit integer scalar.
        impl: the PRNG implementation's name (default `jax_default_prng_impl`).
        dtype: the key dtype instead of `impl` (`key_dtype(...)`).

    Raises:
        TypeError: `seed` is a key or not a scalar.
        ValueError: both `impl` and `dtype` are given, or `impl` is unknown.
    """
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.key")
        impl = dtype
    return _seed("key", seed, impl)


def PRNGKey(seed: Any, *, impl: Any = None) -> Array:
    """A legacy key: the raw data (`uint32[2]`) of `key(seed)`."""
    return random_unwrap_p.bind(_seed("PRNGKey", seed, impl))


def split(key: Any, num: int | Sequence[int] = 2) -> Array:
    """`num` new keys (or an array of keys of shape `num`) from `key`."""
    typed, wrapped = check_prng_key("split", key)
    shape = tuple(num) if isinstance(num, Sequence) else (num,)
    return return_keys(wrapped, random_split_p.bind(typed, shape=shape, **layout_params()))


def fold_in(key: Any, data: Any) -> Array:
    """A new key from `key` and a 32-bit integer `data`."""
    typed, wrapped = check_prng_key("fold_in", key)
    if np.ndim(data):
        raise TypeError(
            "fold_in accepts a scalar, but was given an array of"
            f"shape {np.shape(data)} != (). Use jax.vmap for batching."
        )
    msgs = jnp.asarray(data, dtype="uint32")
    return return_keys(wrapped, random_fold_in_p.bind(typed, msgs))


def key_data(keys: Any) -> Array:
    """The raw data (`uint32[..., 2]`) of a key array."""
    typed, _ = check_prng_key("key_data", keys, allow_batched=True)
    return random_unwrap_p.bind(typed)


def wrap_key_data(key_bits_array: Any, *, impl: Any = None, dtype: Any = None) -> Array:
    """A typed key array from raw data `uint32[..., 2]`."""
    if dtype is not None:
        if impl is not None:
            raise ValueError(
                "Cannot specify both `impl` and `dtype` arguments to jax.random.wrap_key_data"
            )
        impl = dtype
    return random_wrap(key_bits_array, impl=resolve_prng_impl(impl))


def key_impl(keys: Any) -> str | PRNGImpl:
    """The name of the implementation of a key array (`'threefry2x32'`); a user-defined
    implementation (`define_prng_impl`) has no name to look it up by, so it comes itself
    (printing as its tag, as JAX's does)."""
    typed, _ = check_prng_key("key_impl", keys, allow_batched=True)
    found = key_impl_of(typeof(typed).dtype)  # type: ignore[attr-defined]  # a ShapedArray
    assert found is not None
    return found.name if prng_impls.get(found.name) is found else found


def clone(key: Any) -> Array:
    """The same key (JAX's key-reuse checker tells a clone apart; Lamina has none)."""
    return random_clone_p.bind(key)


def bits(
    key: Any, shape: Sequence[int] = (), dtype: Any = None, *, out_sharding: Any = None
) -> Array:
    """Random unsigned integers of `shape` (default dtype uint32, uint64 with x64)."""
    typed, _ = check_prng_key("bits", key)
    if dtype is None:
        dtype = np.dtype("uint64" if enable_x64.value else "uint32")
    else:
        dtype = dtypes.canonicalize_dtype(dtype)
    if not dtypes.issubdtype(dtype, np.unsignedinteger):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
    shape = canonical_shape(shape)
    sharding = sampler_sharding(out_sharding, "bits", shape)
    width = dtype.itemsize * 8
    return sampled(sharding, lambda k: random_bits(k, width, shape), typed)


def random_bits(key: Array, bit_width: int, shape: tuple[int, ...]) -> Array:
    """`random_bits` of a typed key (what samplers call)."""
    return random_bits_p.bind(key, bit_width=bit_width, shape=shape, **layout_params())


def unstack(x: Array) -> list[Array]:
    """The slices of `x` along its first axis, staged as JAX stages iteration over an array
    (`slice` with unit strides, then `squeeze`)."""
    shape = tuple(typeof(x).shape)  # type: ignore[attr-defined]  # an array
    rest = shape[1:]
    return [
        lax.squeeze(lax.slice(x, (i, *(0 for _ in rest)), (i + 1, *rest), (1,) * len(shape)), (0,))
        for i in range(shape[0])
    ]


def split_typed(key: Array, num: int | tuple[int, ...] = 2) -> Array:
    """`split` of a typed key, for samplers."""
    shape = tuple(num) if isinstance(num, tuple) else (num,)
    return random_split_p.bind(key, shape=shape, **layout_params())
