"""`rng_bit_generator` and `rng_uniform`: XLA's own random number generators, as `jax.lax`'s.

`rng_bit_generator` is stateless: a key (`u32[4]`, which XLA reads as `u64[2]`) gives random
bits and the next key. Its NumPy reference computes XLA's algorithms bit for bit: Threefry-2x32
(20 rounds) over a counter starting at the key's second word, and Philox-4x32 (10 rounds, XLA's
default on CPU) over a 128-bit counter made of the key's second and first words, keyed by the
first. `rng_uniform` is XLA's stateful uniform generator; its values are the backend's own
(the reference draws from NumPy).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from lamina_core.interpreters import AxisData, batching_rules, not_differentiable
from lamina_core.ir import (
    AbstractValue,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    dtypes,
    impl_rules,
)
from lamina_core.lax._batching_common import moveaxis
from lamina_core.lax._checks import array_aval


class RandomAlgorithm(enum.IntEnum):
    """The algorithm `rng_bit_generator` asks XLA for."""

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self) -> str:
        return self.name


_BIT_DTYPES: Final = tuple(np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))

# --- the reference: XLA's bit generators on 32-bit words -----------------------------------------

_U32: Final = np.uint32
_U64: Final = np.uint64
_THREEFRY_ROTATIONS: Final = ((13, 15, 26, 6), (17, 29, 16, 24))


def _low(x: Any) -> Any:
    return (np.asarray(x, _U64) & _U64(0xFFFFFFFF)).astype(_U32)


def _high(x: Any) -> Any:
    return (np.asarray(x, _U64) >> _U64(32)).astype(_U32)


def _join(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return lo.astype(_U64) | (hi.astype(_U64) << _U64(32))


def _rotate_left(v: np.ndarray, distance: int) -> np.ndarray:
    return (v << _U32(distance)) | (v >> _U32(32 - distance))


def _threefry2x32(key: Any, x0: np.ndarray, x1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    k0, k1 = _low(key), _high(key)
    schedule = (k0, k1, _U32(0x1BD11BDA) ^ k0 ^ k1)
    x0, x1 = x0 + schedule[0], x1 + schedule[1]
    for block in range(5):
        for r in _THREEFRY_ROTATIONS[block % 2]:
            x0 = x0 + x1
            x1 = x0 ^ _rotate_left(x1, r)
        x0 = x0 + schedule[(block + 1) % 3]
        x1 = x1 + schedule[(block + 2) % 3] + _U32(block + 1)
    return x0, x1


def _halves(shape: tuple[int, ...]) -> tuple[tuple[int, ...], int]:
    """XLA's split of a 32-bit request into two halves: along the first even axis, else the
    longest one (rounded up); a scalar takes one word of a one-element half."""
    if not shape:
        return (1,), 0
    axis = next((i for i, d in enumerate(shape) if d % 2 == 0), int(np.argmax(shape)))
    half = list(shape)
    half[axis] = -(-shape[axis] // 2)
    return tuple(half), axis


def _threefry_bits(key: Any, counter: Any, shape: tuple[int, ...], wide: bool) -> Any:
    if wide:
        count = int(np.prod(shape))
        ctr = counter + np.arange(count, dtype=_U64)
        x0, x1 = _threefry2x32(key, _low(ctr), _high(ctr))
        return _join(x0, x1).reshape(shape), counter + _U64(count)
    half, axis = _halves(shape)
    count = int(np.prod(half))
    ctr = counter + np.arange(count, dtype=_U64)
    x0, x1 = _threefry2x32(key, _low(ctr), _high(ctr))
    if not shape:
        return x0.reshape(()), counter + _U64(count)
    interleaved = np.stack([x0.reshape(half), x1.reshape(half)], axis=axis + 1)
    padded = list(shape)
    padded[axis] = 2 * half[axis]
    return interleaved.reshape(padded)[tuple(slice(0, d) for d in shape)], counter + _U64(count)


def _philox4x32(words: list[np.ndarray], key: Any) -> list[np.ndarray]:
    k0, k1 = _low(key), _high(key)
    for _ in range(10):
        p0 = words[0].astype(_U64) * _U64(0xD2511F53)
        p1 = words[2].astype(_U64) * _U64(0xCD9E8D57)
        words = [_high(p1) ^ words[1] ^ k0, _low(p1), _high(p0) ^ words[3] ^ k1, _low(p0)]
        k0, k1 = k0 + _U32(0x9E3779B9), k1 + _U32(0xBB67AE85)
    return words


def _philox_bits(key: Any, counter: Any, shape: tuple[int, ...], wide: bool) -> Any:
    count = int(np.prod(shape))
    blocks = -(-count * (2 if wide else 1) // 4)  # Philox makes four words at a time
    lo = counter + np.arange(blocks, dtype=_U64)
    hi = np.where(lo < counter, key + _U64(1), key).astype(_U64)  # the 128-bit carry
    words = _philox4x32([_low(lo), _high(lo), _low(hi), _high(hi)], key)
    if wide:
        words = [_join(words[0], words[1]), _join(words[2], words[3])]
    # XLA takes the words round-robin, as other Philox implementations do.
    flat = np.stack(words, axis=1).reshape(-1)[:count]
    return flat.reshape(shape), counter + _U64(blocks)


def _rng_bit_generator_reference(
    key: np.ndarray, *, shape: tuple[int, ...], dtype: np.dtype[Any], algorithm: Any, **_: Any
) -> list[np.ndarray]:
    words = np.ascontiguousarray(key).view(_U64) if key.dtype == _U32 else np.asarray(key)
    wide = np.dtype(dtype).itemsize == 8
    with np.errstate(over="ignore"):
        if algorithm == RandomAlgorithm.RNG_THREE_FRY:
            bits, counter = _threefry_bits(words[0], words[1], shape, wide)
        else:
            bits, counter = _philox_bits(words[0], words[1], shape, wide)
    new_key = np.array([words[0], counter], _U64)
    new_key = new_key.view(_U32) if key.dtype == _U32 else new_key
    return [new_key, np.asarray(bits).astype(dtype)]


# --- rng_bit_generator ------------------------------------------------------------------------

rng_bit_generator_p: Final = Primitive("rng_bit_generator", multiple_results=True)
not_differentiable(rng_bit_generator_p)


@abstract_eval_rules.register(rng_bit_generator_p)
def _rng_bit_generator_abstract_eval(
    key: AbstractValue, *, shape: tuple[int, ...], dtype: np.dtype[Any], **_: Any
) -> list[ShapedArray]:
    k = array_aval("rng_bit_generator", key)
    return [k, ShapedArray(shape, dtype, False)]


impl_rules.set(rng_bit_generator_p, _rng_bit_generator_reference)


def _rng_bit_generator_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[Any], *, shape: Any, **params: Any
) -> tuple[list[Any], list[Any]]:
    # As JAX: one draw of a batch of values with the first key; the other keys are kept.
    from lamina_core.lax._slicing import dynamic_update_index_in_dim

    (keys,), (bd,) = vals, dims
    keys = moveaxis(keys, bd, 0)
    new_key, bits = rng_bit_generator_p.bind(keys[0], shape=(axis_data.size, *shape), **params)
    return [dynamic_update_index_in_dim(keys, new_key, 0, axis=0), bits], [0, 0]


batching_rules.set(rng_bit_generator_p, _rng_bit_generator_batch)


def rng_bit_generator(
    key: Any,
    shape: Sequence[int],
    dtype: Any = np.uint32,
    algorithm: RandomAlgorithm = RandomAlgorithm.RNG_DEFAULT,
    *,
    out_sharding: Any = None,
) -> tuple[Any, Any]:
    """(the next key, random bits of `shape` and unsigned `dtype`) from XLA's generator."""
    if out_sharding is not None:
        raise NotImplementedError("rng_bit_generator: Lamina runs on one device")
    shape = tuple(int(d) for d in shape)
    dtype = dtypes.canonicalize_dtype(np.dtype(dtype))
    if dtype not in _BIT_DTYPES:
        raise TypeError(f"rng_bit_generator: unsupported dtype {dtype}")
    new_key, bits = rng_bit_generator_p.bind(
        key, shape=shape, dtype=dtype, algorithm=algorithm, out_sharding=None
    )
    return new_key, bits


# --- rng_uniform ------------------------------------------------------------------------------

rng_uniform_p: Final = Primitive("rng_uniform")
not_differentiable(rng_uniform_p)


@abstract_eval_rules.register(rng_uniform_p)
def _rng_uniform_abstract_eval(
    a: AbstractValue, b: AbstractValue, *, shape: tuple[int, ...]
) -> ShapedArray:
    lo, hi = array_aval("rng_uniform", a), array_aval("rng_uniform", b)
    if lo.dtype != hi.dtype:
        raise ValueError(
            f"Arguments to rng_uniform must have identical dtypes, got {lo.dtype} and {hi.dtype}."
        )
    if lo.shape != () or hi.shape != ():
        raise ValueError(
            f"Arguments to rng_uniform must be scalars; got shapes {lo.shape} and {hi.shape}."
        )
    return ShapedArray(shape, lo.dtype, lo.weak_type and hi.weak_type)


@impl_rules.register(rng_uniform_p)
def _rng_uniform_reference(a: np.ndarray, b: np.ndarray, *, shape: tuple[int, ...]) -> Any:
    dtype = np.result_type(a)
    if dtype.kind in "iu":
        return np.random.default_rng().integers(a, b, size=shape, dtype=dtype, endpoint=False)
    return np.random.default_rng().uniform(a, b, size=shape).astype(dtype)


def rng_uniform(a: Any, b: Any, shape: Sequence[int]) -> Any:
    """Values uniform in [a, b) from XLA's stateful generator (discouraged, as in JAX: prefer
    `lamina.random`)."""
    return rng_uniform_p.bind(a, b, shape=tuple(shape))


__all__ = [
    "RandomAlgorithm",
    "rng_bit_generator",
    "rng_bit_generator_p",
    "rng_uniform",
    "rng_uniform_p",
]
