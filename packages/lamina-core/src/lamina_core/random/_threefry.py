"""The threefry2x32 PRNG: its hash as a NumPy reference, and the key operations on raw key data.

Everything here works on physical data: a threefry key is two `uint32` words, so a key array
of shape `s` is a `uint32` array of shape `(*s, 2)`. The operations follow JAX 0.10.2 with
`jax_threefry_partitionable=True` (its default): random bits and split keys hash a 64-bit
counter (the flat index into the requested shape, as a high and a low word) under each key;
`fold_in` hashes the pair `(0, data)`; a seed becomes the pair (high word, low word) of the
seed, the high word being 0 for seeds of 32 bits or fewer.

These NumPy functions are the reference evaluator's; lamina-mlir lowers the same algorithms
to StableHLO integer ops, and the tests compare both with JAX bit for bit.
"""

from __future__ import annotations

from typing import Final

import numpy as np

ROTATIONS: Final = ((13, 15, 26, 6), (17, 29, 16, 24))
"""The rotation amounts of the even and odd groups of four rounds."""
KEY_SCHEDULE_PARITY: Final = 0x1BD11BDA
"""Threefish's constant: the third schedule word is `k1 ^ k2 ^ KEY_SCHEDULE_PARITY`."""

_U32 = np.dtype(np.uint32)


def _rotl(x: np.ndarray, d: int) -> np.ndarray:
    return (x << np.uint32(d)) | (x >> np.uint32(32 - d))


def threefry2x32(
    k1: np.ndarray, k2: np.ndarray, x1: np.ndarray, x2: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The threefry2x32 hash (20 rounds) of counters `(x1, x2)` under keys `(k1, k2)`.

    All four are `uint32` arrays broadcast together; arithmetic wraps modulo 2**32.
    """
    k1, k2, x1, x2 = np.broadcast_arrays(*(np.asarray(a, _U32) for a in (k1, k2, x1, x2)))
    ks = (k1, k2, k1 ^ k2 ^ np.uint32(KEY_SCHEDULE_PARITY))
    with np.errstate(over="ignore"):
        a, b = x1 + ks[0], x2 + ks[1]
        for i in range(5):
            for r in ROTATIONS[i % 2]:
                a = a + b
                b = _rotl(b, r) ^ a
            a = a + ks[(i + 1) % 3]
            b = b + ks[(i + 2) % 3] + np.uint32(i + 1)
    return a, b


def counters(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The flat index of each element of `shape` as 64 bits: `(high words, low words)`."""
    flat = np.arange(int(np.prod(shape)), dtype=np.uint64).reshape(shape)
    return (flat >> np.uint64(32)).astype(_U32), (flat & np.uint64(0xFFFFFFFF)).astype(_U32)


def seed(seeds: np.ndarray) -> np.ndarray:
    """Raw keys `(*seeds.shape, 2)` from integer seeds."""
    seeds = np.asarray(seeds)
    if seeds.dtype.itemsize == 8:
        wide = seeds.astype(np.uint64)
        hi = (wide >> np.uint64(32)).astype(_U32)
    else:
        wide = seeds.astype(np.int64) if seeds.dtype.kind == "i" else seeds.astype(np.uint64)
        hi = np.zeros(seeds.shape, _U32)
    lo = (wide & 0xFFFFFFFF).astype(_U32)
    return np.stack([hi, lo], axis=-1)


def split(keys: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Raw keys `(*keys.shape[:-1], *shape, 2)`: each key split into `shape` new keys."""
    batch = keys.shape[:-1]
    k1 = keys[..., 0].reshape(batch + (1,) * len(shape))
    k2 = keys[..., 1].reshape(batch + (1,) * len(shape))
    hi, lo = counters(shape)
    b1, b2 = threefry2x32(k1, k2, hi, lo)
    return np.stack([b1, b2], axis=-1)


def fold_in(keys: np.ndarray, msgs: np.ndarray) -> np.ndarray:
    """Raw keys: each key (broadcast against `msgs`, `uint32`) with its message folded in."""
    b1, b2 = threefry2x32(keys[..., 0], keys[..., 1], np.zeros((), _U32), msgs.astype(_U32))
    return np.stack([b1, b2], axis=-1)


_UINTS: Final = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def random_bits(keys: np.ndarray, bit_width: int, shape: tuple[int, ...]) -> np.ndarray:
    """`bit_width`-bit unsigned random integers `(*keys.shape[:-1], *shape)`."""
    batch = keys.shape[:-1]
    k1 = keys[..., 0].reshape(batch + (1,) * len(shape))
    k2 = keys[..., 1].reshape(batch + (1,) * len(shape))
    hi, lo = counters(shape)
    b1, b2 = threefry2x32(k1, k2, hi, lo)
    out_shape = batch + tuple(shape)
    b1, b2 = np.broadcast_to(b1, out_shape), np.broadcast_to(b2, out_shape)
    if bit_width == 64:
        return (b1.astype(np.uint64) << np.uint64(32)) | b2.astype(np.uint64)
    out: np.ndarray = (b1 ^ b2).astype(_UINTS[bit_width])
    return out
