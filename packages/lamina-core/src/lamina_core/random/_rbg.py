"""The `rbg` and `unsafe_rbg` PRNG implementations' key operations, as JAX 0.10.2's.

Their keys are four `uint32` words. Both seed a key as a threefry key twice over and draw bits
with XLA's `rng_bit_generator`. `rbg` splits and folds data in with threefry, each half of the
key a threefry key; `unsafe_rbg` splits by taking every tenth of `10 * n` generated keys and
folds data in by xor with the last of ten keys generated from the data's seed.

The functions act on raw key data (`uint32[*batch, 4]`) with lax ops and the threefry key
primitives, so the reference evaluator runs them (this module registers them as both
implementations' key operations) and lamina-mlir traces and lowers them.
"""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np

from lamina_core import lax
from lamina_core.lax import rng_bit_generator
from lamina_core.random import _threefry
from lamina_core.random._primitives import (
    KeyOps,
    random_fold_in_p,
    random_split_p,
    random_unwrap_p,
    random_wrap_p,
    rbg_prng_impl,
    register_key_ops,
    threefry_prng_impl,
    unsafe_rbg_prng_impl,
)
from lamina_core.trace import typeof
from lamina_core.transforms import vmap

Array = Any

_U32: Final = np.dtype(np.uint32)
UINT_DTYPES: Final = {n: np.dtype(f"uint{n}") for n in (8, 16, 32, 64)}


def _batch(raw: Array) -> tuple[int, ...]:
    return tuple(typeof(raw).shape)[:-1]  # type: ignore[attr-defined]  # an array


def _per_key(fun: Any, raw: Array) -> Array:
    """`fun` of one key (`uint32[4]`) mapped over the keys of `raw`."""
    batch = _batch(raw)
    if not batch:
        return fun(raw)
    flat = lax.reshape(raw, (math.prod(batch), 4))
    out = vmap(fun)(flat)
    return lax.reshape(out, (*batch, *tuple(typeof(out).shape)[1:]))  # type: ignore[attr-defined]


def _half_keys(raw: Array) -> Array:
    """The two threefry keys `key<fry>[*batch, 2]` that the halves of `raw` are."""
    batch = _batch(raw)
    halves = lax.reshape(raw, (*batch, 2, 2))
    return random_wrap_p.bind(halves, impl=threefry_prng_impl)


def seed_data(threefry_data: np.ndarray) -> np.ndarray:
    """rbg key data from the threefry key data of the same seeds: that data twice."""
    return np.concatenate([threefry_data, threefry_data], axis=-1)


def random_bits(raw: Array, bit_width: int, shape: tuple[int, ...]) -> Array:
    dtype = UINT_DTYPES[bit_width]
    return _per_key(lambda k: rng_bit_generator(k, shape, dtype=dtype)[1], raw)


def rbg_split(raw: Array, shape: tuple[int, ...], partitionable: bool = True) -> Array:
    batch = _batch(raw)
    layout = {} if partitionable else {"partitionable": False}
    keys = random_split_p.bind(_half_keys(raw), shape=shape, **layout)
    data = random_unwrap_p.bind(keys)  # (*batch, 2, *shape, 2)
    n = len(batch)
    moved = lax.transpose(
        data, (*range(n), *range(n + 1, n + 1 + len(shape)), n, n + 1 + len(shape))
    )
    return lax.reshape(moved, (*batch, *shape, 4))


def _broadcast_keys_and_msgs(raw: Array, msgs: Array) -> tuple[Array, Array, tuple[int, ...]]:
    batch = _batch(raw)
    msg_shape = tuple(typeof(msgs).shape)  # type: ignore[attr-defined]  # an array
    out = tuple(np.broadcast_shapes(batch, msg_shape))
    n = len(out)
    raw = lax.broadcast_in_dim(raw, (*out, 4), (*range(n - len(batch), n), n))
    msgs = lax.broadcast_in_dim(msgs, out, tuple(range(n - len(msg_shape), n)))
    return raw, msgs, out


def rbg_fold_in(raw: Array, msgs: Array) -> Array:
    raw, msgs, out = _broadcast_keys_and_msgs(raw, msgs)
    # Each half folds the same message in.
    halves = lax.broadcast_in_dim(msgs, (*out, 2), tuple(range(len(out))))
    keys = random_fold_in_p.bind(_half_keys(raw), halves)
    return lax.reshape(random_unwrap_p.bind(keys), (*out, 4))


def _unsafe_split_one(key: Array, shape: tuple[int, ...]) -> Array:
    num = math.prod(shape)
    _, keys = rng_bit_generator(key, (10 * num, 4), dtype=_U32)
    every_tenth = lax.slice_in_dim(keys, 0, 10 * num, stride=10)
    return lax.reshape(every_tenth, (*shape, 4))


def unsafe_split(raw: Array, shape: tuple[int, ...], partitionable: bool = True) -> Array:
    return _per_key(lambda k: _unsafe_split_one(k, shape), raw)


def _unsafe_fold_in_one(key: Array, msg: Array) -> Array:
    zero = lax.full((), 0, _U32)
    word = lax.convert_element_type(msg, _U32)
    seed = lax.concatenate([lax.reshape(v, (1,)) for v in (zero, word, zero, word)], 0)
    _, generated = rng_bit_generator(seed, (10, 4), dtype=_U32)
    return lax.bitwise_xor(key, lax.reshape(lax.slice_in_dim(generated, 9, 10), (4,)))


def unsafe_fold_in(raw: Array, msgs: Array) -> Array:
    raw, msgs, out = _broadcast_keys_and_msgs(raw, msgs)
    if not out:
        return _unsafe_fold_in_one(raw, msgs)
    flat_keys = lax.reshape(raw, (math.prod(out), 4))
    flat_msgs = lax.reshape(msgs, (math.prod(out),))
    return lax.reshape(vmap(_unsafe_fold_in_one)(flat_keys, flat_msgs), (*out, 4))


# --- the reference evaluator's key operations -----------------------------------------------


def _seed(seeds: np.ndarray) -> np.ndarray:
    return seed_data(_threefry.seed(seeds))


def _bits(raw: np.ndarray, bit_width: int, shape: tuple[int, ...], partitionable: bool) -> Any:
    return np.asarray(random_bits(raw, bit_width, shape))


def _rbg_split(raw: np.ndarray, shape: tuple[int, ...], partitionable: bool) -> Any:
    return np.asarray(rbg_split(raw, shape, partitionable))


def _rbg_fold_in(raw: np.ndarray, msgs: np.ndarray) -> Any:
    return np.asarray(rbg_fold_in(raw, msgs))


def _unsafe_split(raw: np.ndarray, shape: tuple[int, ...], partitionable: bool) -> Any:
    return np.asarray(unsafe_split(raw, shape, partitionable))


def _unsafe_fold_in(raw: np.ndarray, msgs: np.ndarray) -> Any:
    return np.asarray(unsafe_fold_in(raw, msgs))


register_key_ops(rbg_prng_impl, KeyOps(_seed, _rbg_split, _rbg_fold_in, _bits))
register_key_ops(unsafe_rbg_prng_impl, KeyOps(_seed, _unsafe_split, _unsafe_fold_in, _bits))
