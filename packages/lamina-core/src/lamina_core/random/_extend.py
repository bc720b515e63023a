"""What `jax.extend.random` publishes: seeding keys of a given implementation, threefry's raw
hash on a key pair, and PRNG implementations users define from four functions.

A user implementation (`define_prng_impl`) gives its functions on one key (`uint32[key_shape]`)
as JAX asks for them; here they are mapped over the batch of a key array, once as its key
operations for the reference evaluator (`register_key_ops`) and once as traceable functions
lamina-mlir lowers in place of the key primitives (`user_key_ops`). The functions are
written with Lamina's own lax or numpy, so both interpreters can run them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.config import config
from lamina_core.ir import ShapedArray, dtypes
from lamina_core.random._keys import random_seed_offset, resolve_prng_impl
from lamina_core.random._primitives import (
    KeyOps,
    PRNGImpl,
    random_seed_p,
    register_key_ops,
    threefry2x32_p,
)
from lamina_core.trace import typeof
from lamina_core.transforms import vmap

Array = Any
Shape = tuple[int, ...]


def random_seed(seeds: Any, impl: Any) -> Array:
    """Keys of implementation `impl` from integer `seeds`, one key per seed (any shape).

    Python ints go through int64, as in JAX, so that hashes beyond int32 seed with x64 off.
    """
    prng = resolve_prng_impl(impl)
    arr = jnp.asarray(np.int64(seeds)) if isinstance(seeds, int) else jnp.asarray(seeds)
    if "jax_random_seed_offset" in config.touched and random_seed_offset.value:
        arr = arr + random_seed_offset.value
    return random_seed_p.bind(arr, impl=prng)


def seed_with_impl(impl: Any, seed: Any) -> Array:
    """`random_seed(seed, impl=impl)`: arguments in the other order, as JAX has them."""
    return random_seed(seed, impl=impl)


def threefry_2x32(keypair: Any, count: Any) -> Array:
    """Threefry-2x32 of the `uint32` counts `count` under the key pair `keypair`: the counts'
    first and second halves (padded by a 0 when odd) hashed as the two words, and the outputs
    concatenated back into `count`'s shape.

    Raises:
        TypeError: an argument is not `uint32`.
    """
    key1, key2 = keypair
    found = [dtypes.dtype(key1), dtypes.dtype(key2), dtypes.dtype(count)]
    if not all(d == np.uint32 for d in found):
        raise TypeError(f"threefry_2x32 requires uint32 arguments, got {found}")
    flat = count.ravel()
    odd = flat.shape[0] % 2
    padded = jnp.concatenate([flat, jnp.uint32([0])]) if odd else flat
    halves = jnp.split(padded, 2)
    hashed = threefry2x32_p.bind(key1, key2, halves[0], halves[1])
    out = jnp.concatenate(hashed)
    return lax.reshape(out[:-1] if odd else out, tuple(count.shape))


# --- user-defined implementations -----------------------------------------------------------


def _shape(x: Array) -> Shape:
    aval = typeof(x)
    assert isinstance(aval, ShapedArray)
    return tuple(aval.shape)


def _mapped(fun: Callable[..., Array], depth: int) -> Callable[..., Array]:
    """`fun` of single keys (and messages) mapped over `depth` leading axes."""
    for _ in range(depth):
        fun = vmap(fun)
    return fun


def _user_key_ops(
    key_shape: Shape,
    seed: Callable[[Array], Array],
    split: Callable[[Array, Shape], Array],
    random_bits: Callable[[Array, int, Shape], Array],
    fold_in: Callable[[Array, Any], Array],
) -> KeyOps:
    """The four functions of one key as key operations on raw key arrays (any batch)."""
    rank = len(key_shape)

    def seed_all(seeds: Array) -> Array:
        return _mapped(seed, len(_shape(seeds)))(seeds)

    def split_all(raw: Array, shape: Shape, partitionable: bool) -> Array:
        depth = len(_shape(raw)) - rank
        return _mapped(lambda k: split(k, shape), depth)(raw)

    def bits_all(raw: Array, bit_width: int, shape: Shape, partitionable: bool) -> Array:
        depth = len(_shape(raw)) - rank
        return _mapped(lambda k: random_bits(k, bit_width, shape), depth)(raw)

    def fold_in_all(raw: Array, msgs: Array) -> Array:
        batch = np.broadcast_shapes(_shape(raw)[: len(_shape(raw)) - rank], _shape(msgs))
        raw = jnp.broadcast_to(raw, (*batch, *key_shape))
        msgs = jnp.broadcast_to(msgs, batch)
        return _mapped(fold_in, len(batch))(raw, msgs)

    return KeyOps(seed_all, split_all, fold_in_all, bits_all)


def _on_host(ops: KeyOps) -> KeyOps:
    """`ops` giving NumPy arrays, as the reference evaluator's rules expect."""
    return KeyOps(
        lambda seeds: np.asarray(ops.seed(seeds)),
        lambda raw, shape, p: np.asarray(ops.split(raw, shape, p)),
        lambda raw, msgs: np.asarray(ops.fold_in(raw, msgs)),
        lambda raw, width, shape, p: np.asarray(ops.random_bits(raw, width, shape, p)),
    )


_user_ops: dict[PRNGImpl, KeyOps] = {}


def user_key_ops(impl: PRNGImpl) -> KeyOps | None:
    """The traceable key operations of a user-defined implementation (None for Lamina's own):
    what lamina-mlir lowers the key primitives on its keys to."""
    return _user_ops.get(impl)


def define_prng_impl(
    *,
    key_shape: Shape,
    seed: Callable[[Array], Array],
    split: Callable[[Array, Shape], Array],
    random_bits: Callable[[Array, int, Shape], Array],
    fold_in: Callable[[Array, Any], Array],
    name: str = "<unnamed>",
    tag: str = "?",
) -> PRNGImpl:
    """A new PRNG implementation, usable wherever `jax.random` takes `impl=`.

    Args:
        key_shape: the shape of one raw key (`uint32`).
        seed: an integer scalar to one raw key.
        split: `split(key, shape)`: raw keys `(*shape, *key_shape)`.
        random_bits: `random_bits(key, bit_width, shape)`: unsigned integers of `shape`.
        fold_in: `fold_in(key, data)`: a raw key from a key and a `uint32` scalar.
        name: the implementation's name (`jax.random.key_impl`).
        tag: how keys print (`key<tag>`, `impl=tag`).

    Raises:
        ValueError: an implementation with the same tag and key shape exists; their keys would
            share a dtype.
    """
    impl = PRNGImpl(name, tag, tuple(key_shape))
    if impl.key_type.payload is not impl:
        raise ValueError(
            f"a PRNG implementation with tag {tag!r} and key shape {tuple(key_shape)} is "
            "already defined; give this one another tag"
        )
    ops = _user_key_ops(tuple(key_shape), seed, split, random_bits, fold_in)
    _user_ops[impl] = ops
    register_key_ops(impl, _on_host(ops))
    return impl
