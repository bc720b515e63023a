"""Threefry's splits and random bits with `jax_threefry_partitionable=False`, as lax ops.

JAX 0.10.2's other layout: a key hashes the counters `0, 1, ..., n - 1` as one flat list,
whose first half goes in the hash's first word and second half in its second (padded by one
when `n` is odd), and the two output halves are concatenated back into `n` words. A split into
`s` keys takes `2 * prod(s)` such words, pairs in order; `b`-bit random values take the
`ceil(b * prod(s) / 32)` words, 64-bit values pairing the first half (high words) with the
second, 8- and 16-bit values cutting each word into its low-first pieces. `fold_in` is the
same in both layouts.

These functions act on raw key data (`uint32[..., 2]`) and work both ways: the reference
evaluator runs them on NumPy arrays, lamina-mlir traces and lowers them. This module registers
threefry's key operations for the reference evaluator: `_threefry`'s NumPy functions in the
partitionable layout, these in the other.
"""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np

from lamina_core import lax
from lamina_core.random import _threefry
from lamina_core.random._primitives import (
    KeyOps,
    register_key_ops,
    threefry2x32_p,
    threefry_prng_impl,
)
from lamina_core.trace import typeof

Array = Any

_U32: Final = np.dtype(np.uint32)
_MAX_WORDS: Final = int(np.iinfo(np.uint32).max)


def _batch(raw: Array) -> tuple[int, ...]:
    return tuple(typeof(raw).shape)[:-1]  # type: ignore[attr-defined]  # an array


def _word(raw: Array, i: int) -> Array:
    n = len(_batch(raw))
    return lax.squeeze(lax.slice_in_dim(raw, i, i + 1, axis=n), (n,))


def hash_iota(raw: Array, n: int) -> Array:
    """`uint32[*batch, n]`: each key of `raw` hashing the counters `0 .. n - 1` as JAX's
    flat `threefry_2x32` does (halves in the two words, outputs concatenated)."""
    batch = _batch(raw)
    half = (n + 1) // 2
    shape = (*batch, half)
    lead = tuple(range(len(batch)))
    k1 = lax.broadcast_in_dim(_word(raw, 0), shape, lead)
    k2 = lax.broadcast_in_dim(_word(raw, 1), shape, lead)
    x1 = lax.iota(_U32, half)
    x2 = lax.add(x1, np.array(half, _U32))
    if n % 2:
        # An odd count is padded with a 0 counter (paired with the first half's last one).
        x2 = lax.rem(x2, np.array(n, _U32))
    x1 = lax.broadcast_in_dim(x1, shape, (len(batch),))
    x2 = lax.broadcast_in_dim(x2, shape, (len(batch),))
    y1, y2 = threefry2x32_p.bind(k1, k2, x1, x2)
    words = lax.concatenate([y1, y2], len(batch))
    return words if 2 * half == n else lax.slice_in_dim(words, 0, n, axis=len(batch))


def split(raw: Array, shape: tuple[int, ...]) -> Array:
    """Raw keys `(*batch, *shape, 2)`: consecutive pairs of `2 * prod(shape)` hashed words."""
    batch = _batch(raw)
    words = hash_iota(raw, 2 * math.prod(shape))
    return lax.reshape(words, (*batch, *shape, 2))


def random_bits(raw: Array, bit_width: int, shape: tuple[int, ...]) -> Array:
    """`bit_width`-bit unsigned values `(*batch, *shape)` from hashed words."""
    batch = _batch(raw)
    size = math.prod(shape)
    n_words = -(-bit_width * size // 32)
    if n_words > _MAX_WORDS:
        raise NotImplementedError(
            "random bits of more than 2**32 - 1 words with jax_threefry_partitionable=False"
        )
    words = hash_iota(raw, n_words)
    axis = len(batch)
    if bit_width == 32:
        return lax.reshape(words, (*batch, *shape))
    if bit_width == 64:
        u64 = np.dtype(np.uint64)
        high = lax.convert_element_type(lax.slice_in_dim(words, 0, size, axis=axis), u64)
        low = lax.convert_element_type(lax.slice_in_dim(words, size, 2 * size, axis=axis), u64)
        both = lax.bitwise_or(lax.shift_left(high, np.array(32, u64)), low)
        return lax.reshape(both, (*batch, *shape))
    per_word = 32 // bit_width
    pieces_shape = (*batch, n_words, per_word)
    spread = lax.broadcast_in_dim(words, pieces_shape, tuple(range(axis + 1)))
    shifts = lax.mul(lax.broadcasted_iota(_U32, pieces_shape, axis + 1), np.uint32(bit_width))
    mask = np.array((1 << bit_width) - 1, _U32)
    pieces = lax.bitwise_and(lax.shift_right_logical(spread, shifts), mask)
    flat = lax.reshape(pieces, (*batch, n_words * per_word))
    flat = lax.slice_in_dim(flat, 0, size, axis=axis)
    out = lax.convert_element_type(flat, np.dtype(f"uint{bit_width}"))
    return lax.reshape(out, (*batch, *shape))


# --- the reference evaluator's key operations -----------------------------------------------


def _split(raw: np.ndarray, shape: tuple[int, ...], partitionable: bool) -> Any:
    if partitionable:
        return _threefry.split(raw, shape)
    return np.asarray(split(raw, shape))


def _random_bits(
    raw: np.ndarray, bit_width: int, shape: tuple[int, ...], partitionable: bool
) -> Any:
    if partitionable:
        return _threefry.random_bits(raw, bit_width, shape)
    return np.asarray(random_bits(raw, bit_width, shape))


register_key_ops(
    threefry_prng_impl, KeyOps(_threefry.seed, _split, _threefry.fold_in, _random_bits)
)
