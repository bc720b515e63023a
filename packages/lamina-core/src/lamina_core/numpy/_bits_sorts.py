"""Bit packing, partial and lexicographic sorts, vector products and float decomposition of
`jax.numpy`, computed with the same lax operations as JAX 0.10.2 so values agree; `__all__`
also names the Bessel-window, polynomial, unwrap and gradient functions of
`_polys_gradients`, exported through this module."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

import lamina_core.numpy as jnp
from lamina_core import lax as _lax
from lamina_core.custom_derivatives import custom_jvp
from lamina_core.ir import dtypes as _dtypes
from lamina_core.numpy._functional import vectorize
from lamina_core.numpy._index_update import at as _at
from lamina_core.numpy._polys_gradients import (
    gradient,
    i0,
    kaiser,
    poly,
    polydiv,
    polymul,
    trim_zeros,
    unwrap,
)
from lamina_core.numpy._promote import (
    promote_args_inexact,
    promote_args_numeric,
    promote_dtypes_inexact,
)
from lamina_core.numpy._reductions import canonicalize_axis, ensure_arraylike
from lamina_core.numpy._util import Array, ArrayLike, dtype_of, shape_of
from lamina_core.transforms import Jitted, vmap

__all__ = [
    "argpartition",
    "bitwise_count",
    "frexp",
    "gradient",
    "i0",
    "kaiser",
    "lexsort",
    "matvec",
    "packbits",
    "partition",
    "poly",
    "polydiv",
    "polymul",
    "sort_complex",
    "spacing",
    "trim_zeros",
    "unpackbits",
    "unwrap",
    "vecdot",
    "vecmat",
]


def _is_integer_or_bool(dtype: np.dtype) -> bool:
    return dtype.kind in "biu"


# --- bits -------------------------------------------------------------------------------


def _packbits(a: Array, axis: int | None = None, bitorder: str = "big") -> Array:
    (arr,) = ensure_arraylike("packbits", a)
    if not _is_integer_or_bool(dtype_of(arr)):
        raise TypeError("Expected an input array of integer or boolean data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    arr = jnp.astype(jnp.not_equal(arr, jnp.zeros((), dtype_of(arr))), np.uint8)
    bits = jnp.arange(8, dtype=np.uint8)
    if bitorder == "big":
        bits = _lax.rev(bits, (0,))
    if axis is None:
        arr = jnp.ravel(arr)
        axis = 0
    arr = jnp.swapaxes(arr, axis, -1)
    shape = shape_of(arr)
    if shape[-1] % 8:
        config = [(0, 0, 0)] * (len(shape) - 1) + [(0, 8 - shape[-1] % 8, 0)]
        arr = _lax.pad(arr, np.uint8(0), config)
        shape = shape_of(arr)
    arr = jnp.reshape(arr, (*shape[:-1], shape[-1] // 8, 8))
    bits = jnp.expand_dims(bits, tuple(range(len(shape_of(arr)) - 1)))
    packed = jnp.astype(jnp.sum(jnp.left_shift(arr, bits), -1), np.uint8)
    return jnp.swapaxes(packed, axis, -1)


@partial(Jitted, static_argnames=("axis", "bitorder"))
def packbits(a: ArrayLike, axis: int | None = None, bitorder: str = "big") -> Array:
    """The nonzero-ness of the elements of `a` packed into the bits of `uint8` values, eight
    to a byte along `axis` (the flattened array if None), padded with zeros."""
    return _packbits(a, axis=axis, bitorder=bitorder)


def _unpackbits(
    a: Array, axis: int | None = None, count: int | None = None, bitorder: str = "big"
) -> Array:
    (arr,) = ensure_arraylike("unpackbits", a)
    if dtype_of(arr) != np.dtype(np.uint8):
        raise TypeError("Expected an input array of unsigned byte data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    bits = jnp.left_shift(1, jnp.arange(8, dtype=np.uint8))
    if bitorder == "big":
        bits = _lax.rev(bits, (0,))
    if axis is None:
        arr = jnp.ravel(arr)
        axis = 0
    arr = jnp.swapaxes(arr, axis, -1)
    rank = len(shape_of(arr))
    masked = jnp.bitwise_and(jnp.expand_dims(arr, -1), jnp.expand_dims(bits, tuple(range(rank))))
    unpacked = jnp.astype(jnp.greater(masked, 0), np.uint8)
    shape = shape_of(unpacked)
    unpacked = jnp.reshape(unpacked, (*shape[:-2], shape[-2] * shape[-1]))
    if count is not None:
        n = shape_of(unpacked)[-1]
        if count > n:
            widths = [(0, 0)] * (len(shape_of(unpacked)) - 1) + [(0, count - n)]
            unpacked = jnp.pad(unpacked, widths)
        else:
            unpacked = unpacked[..., :count]
    return jnp.swapaxes(unpacked, axis, -1)


@partial(Jitted, static_argnames=("axis", "count", "bitorder"))
def unpackbits(
    a: ArrayLike, axis: int | None = None, count: int | None = None, bitorder: str = "big"
) -> Array:
    """The bits of the `uint8` array `a` as `uint8` zeros and ones along `axis` (the
    flattened array if None), cut or zero-padded to `count` bits if given."""
    return _unpackbits(a, axis=axis, count=count, bitorder=bitorder)


def _bitwise_count(x: Array) -> Array:
    (arr,) = promote_args_numeric("bitwise_count", x)
    # NumPy counts the bits of the magnitude and answers in uint8.
    return jnp.astype(_lax.population_count(jnp.absolute(arr)), np.uint8)


@Jitted
def bitwise_count(x: ArrayLike, /) -> Array:
    """The number of one bits in the absolute value of each element, as `uint8`."""
    return _bitwise_count(x)


# --- sorts ------------------------------------------------------------------------------


def _partition_prepare(name: str, a: Any, kth: int, axis: int) -> tuple[Any, int, int]:
    (arr,) = ensure_arraylike("partition", a)
    if dtype_of(arr).kind == "c":
        raise NotImplementedError(f"jnp.{name} for complex dtype is not implemented.")
    shape = shape_of(arr)
    axis = canonicalize_axis(axis, len(shape))
    kth = canonicalize_axis(kth, shape[axis])
    return jnp.swapaxes(arr, axis, -1), kth, axis


def _negated_for_bottom(arr: Any) -> Any:
    # Unsigned values are shifted by one so that zero does not negate to itself.
    if dtype_of(arr).kind == "u":
        return _lax.neg(jnp.add(arr, 1))
    return _lax.neg(arr)


def _partition(a: Array, kth: int, axis: int = -1) -> Array:
    arr, kth, axis = _partition_prepare("partition", a, kth, axis)
    low = _lax.neg(_lax.top_k(_negated_for_bottom(arr), kth + 1)[0])
    if dtype_of(arr).kind == "u":
        low = jnp.subtract(low, 1)
    high = _lax.top_k(arr, shape_of(arr)[-1] - kth - 1)[0]
    out = _lax.concatenate([low, high], len(shape_of(arr)) - 1)
    return jnp.swapaxes(out, -1, axis)


@partial(Jitted, static_argnames=("kth", "axis"))
def partition(a: ArrayLike, kth: int, axis: int = -1) -> Array:
    """`a` with the `kth+1` smallest values along `axis` first (ascending), then the rest
    (descending), as JAX's `top_k`-based partition orders them."""
    return _partition(a, kth=kth, axis=axis)


def _argpartition(a: Array, kth: int, axis: int = -1) -> Array:
    arr, kth, axis = _partition_prepare("argpartition", a, kth, axis)
    low = _lax.top_k(_negated_for_bottom(arr), kth + 1)[1]

    # The other indices, found through a proxy that zeroes the chosen ones, so that equal
    # values cannot be picked twice.
    def zero_at(x: Any, i: Any) -> Any:
        return _at(x)[i].set(0)

    for _ in range(len(shape_of(arr)) - 1):
        zero_at = vmap(zero_at)
    proxy = zero_at(_lax.full(shape_of(arr), 1.0), low)
    high = _lax.top_k(proxy, shape_of(arr)[-1] - kth - 1)[1]
    out = _lax.concatenate([low, high], len(shape_of(arr)) - 1)
    return jnp.swapaxes(out, -1, axis)


@partial(Jitted, static_argnames=("kth", "axis"))
def argpartition(a: ArrayLike, kth: int, axis: int = -1) -> Array:
    """The indices that `partition` would gather along `axis`."""
    return _argpartition(a, kth=kth, axis=axis)


def _to_complex_dtype(dtype: np.dtype) -> np.dtype:
    wide = dtype in (np.dtype(np.float64), np.dtype(np.complex128))
    return np.dtype(np.complex128 if wide else np.complex64)


def _sort_complex(a: Array) -> Array:
    (arr,) = ensure_arraylike("sort_complex", a)
    arr = _lax.sort(arr)
    return _lax.convert_element_type(arr, _to_complex_dtype(dtype_of(arr)))


@Jitted
def sort_complex(a: ArrayLike) -> Array:
    """`a` sorted along its last axis (complex numbers by real, then imaginary part), as a
    complex array."""
    return _sort_complex(a)


def _lexsort(keys: tuple[Any, ...], axis: int = -1) -> Array:
    if len(keys) == 0:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    if len({shape_of(k) for k in keys}) > 1:
        raise ValueError("all keys need to be the same shape")
    shape = shape_of(keys[0])
    if not shape:
        return _lax.full((), 0, _dtypes.canonicalize_dtype(_dtypes.int64))
    axis = canonicalize_axis(axis, len(shape))
    index_dtype = np.int32 if shape[axis] <= np.iinfo(np.int32).max else np.int64
    iota = _lax.broadcasted_iota(_dtypes.canonicalize_dtype(index_dtype), shape, axis)
    return _lax.sort((*keys[::-1], iota), dimension=axis, num_keys=len(keys))[-1]


@partial(Jitted, static_argnames=("axis",))
def lexsort(keys: Array | np.ndarray | Sequence[ArrayLike], axis: int = -1) -> Array:
    """The indices that sort by the last key, ties broken by the one before, and so on."""
    key_arrays = tuple(ensure_arraylike("lexsort", *tuple(keys)))
    return _lexsort(key_arrays, axis=axis)


# --- vector products ----------------------------------------------------------------------


def _matvec(x1: Array, x2: Array) -> Array:
    x1, x2 = ensure_arraylike("matvec", x1, x2)
    return vectorize(jnp.matmul, signature="(n,m),(m)->(n)")(x1, x2)


@Jitted
def matvec(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Matrix-vector products over the broadcast leading dimensions."""
    return _matvec(x1, x2)


def _vecmat(x1: Array, x2: Array) -> Array:
    x1, x2 = ensure_arraylike("matvec", x1, x2)  # sic: JAX names matvec here
    return vectorize(jnp.matmul, signature="(n),(n,m)->(m)")(jnp.conjugate(x1), x2)


@Jitted
def vecmat(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Conjugated vector-matrix products over the broadcast leading dimensions."""
    return _vecmat(x1, x2)


def vecdot(
    x1: ArrayLike,
    x2: ArrayLike,
    /,
    *,
    axis: int = -1,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Array:
    """The dot products of conjugated `x1` and `x2` along `axis`, broadcast over the rest."""
    a, b = ensure_arraylike("jnp.vecdot", x1, x2)
    sa, sb = shape_of(a), shape_of(b)
    if sa[axis] != sb[axis]:
        raise ValueError(f"axes must match; got shapes {sa} and {sb} with {axis=}")
    a = jnp.moveaxis(a, axis, -1)
    b = jnp.moveaxis(b, axis, -1)
    dot = partial(jnp.vdot, precision=precision, preferred_element_type=preferred_element_type)
    return vectorize(dot, signature="(n),(n)->()")(a, b)


# --- floats -----------------------------------------------------------------------------

_INT_OF_BITS = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}


def _frexp(x: Any) -> tuple[Any, Any]:
    dtype = dtype_of(x)
    info = _dtypes.finfo(dtype)
    int_type = np.dtype(_INT_OF_BITS[info.bits])
    exp_mask = (1 << info.nexp) - 1
    bias = 1 - info.minexp
    # Subnormals are scaled into the normal range first, and the exponent corrected.
    tiny = jnp.less(jnp.absolute(x), jnp.asarray(info.tiny, dtype))
    scaled = jnp.where(tiny, jnp.multiply(x, np.array(1 << info.nmant, dtype)), x)
    shift = jnp.where(tiny, int_type.type(-info.nmant), int_type.type(0))
    bits = _lax.bitcast_convert_type(scaled, int_type)
    field = jnp.bitwise_and(jnp.right_shift(bits, info.nmant), exp_mask)
    exponent = jnp.add(shift, jnp.add(jnp.subtract(field, bias), 1))
    bits = jnp.bitwise_and(bits, ~(exp_mask << info.nmant))
    bits = jnp.bitwise_or(bits, (bias - 1) << info.nmant)
    mantissa = _lax.bitcast_convert_type(bits, dtype)
    special = jnp.logical_or(
        jnp.logical_or(jnp.isinf(x), jnp.isnan(x)), jnp.equal(x, jnp.zeros((), dtype))
    )
    exponent = jnp.where(special, _lax.full_like(exponent, 0), exponent)
    return jnp.where(special, x, mantissa), _lax.convert_element_type(exponent, np.int32)


_frexp_core = custom_jvp(_frexp)


def _frexp_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    m, e = frexp(x)
    dm = jnp.multiply(t, jnp.exp2(jnp.negative(jnp.astype(e, dtype_of(t)))))
    de = np.zeros(shape_of(e), _dtypes.float0)
    return (m, e), (dm, de)


_frexp_core.defjvp(_frexp_jvp)


@Jitted
def frexp(x: ArrayLike, /) -> tuple[Array, Array]:
    """`x` split into mantissas in [0.5, 1) (signed) and integer exponents of two, jitted as
    `jax.numpy.frexp`."""
    (arr,) = ensure_arraylike("frexp", x)
    (arr,) = promote_dtypes_inexact(arr)
    if dtype_of(arr).kind == "c":
        raise TypeError("frexp does not support complex-valued inputs")
    m, e = _frexp_core(arr)
    return m, e


@Jitted
def _spacing(x: Array) -> Array:
    (arr,) = promote_args_inexact("spacing", x)
    dtype = dtype_of(arr)
    if dtype.kind == "c":
        raise ValueError("jnp.spacing is not defined for complex inputs.")
    inf = np.array(np.inf, dtype)
    if dtype == np.dtype(np.float16):
        return jnp.subtract(_lax.nextafter(arr, jnp.broadcast_to(inf, shape_of(arr))), arr)
    toward = jnp.copysign(inf, arr)
    result = jnp.subtract(_lax.nextafter(arr, toward), arr)
    smallest = _dtypes.finfo(dtype).smallest_subnormal
    return jnp.where(jnp.equal(result, 0), jnp.copysign(smallest, arr), result)


def spacing(x: ArrayLike, /) -> Array:
    """The distance from each element to the next representable number away from zero."""
    return _spacing(x)
