"""Bit packing, partial and lexicographic sorts, vector products, float decomposition,
Bessel-window and polynomial helpers, phase unwrapping and numerical gradients of
`jax.numpy`, computed with the same lax operations as JAX 0.10.2 so values agree."""

from __future__ import annotations

import operator
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
from lamina_core.numpy._promote import (
    promote_args_inexact,
    promote_args_numeric,
    promote_dtypes,
    promote_dtypes_inexact,
)
from lamina_core.numpy._reductions import canonicalize_axis, ensure_arraylike
from lamina_core.numpy._util import Array, ArrayLike, dtype_of, shape_of
from lamina_core.trace._tracing import ConcretizationTypeError, Tracer
from lamina_core.transforms._jit import Jitted
from lamina_core.transforms._vmap import vmap

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


def _concrete(x: Any, context: str) -> Any:
    """`x` as a NumPy array, or JAX's error when it is traced."""
    if isinstance(x, Tracer):
        raise ConcretizationTypeError(
            "Abstract tracer value encountered where concrete value is expected: "
            f"{x._error_repr()}\n{context}{x._origin_msg()}\n"
        )
    return np.asarray(x)


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


# --- Bessel i0 and the Kaiser window ------------------------------------------------------


def _i0_kernel(x: Any) -> Any:
    ax = _lax.abs(x)
    return _lax.mul(_lax.exp(ax), _lax.bessel_i0e(ax))


_i0_kernel.__name__ = _i0_kernel.__qualname__ = "_i0"  # the name JAX's rule prints
_i0_core = custom_jvp(_i0_kernel)


def _i0_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    from lamina_core import jvp

    out, t_out = jvp(_i0_kernel, primals, tangents)
    # The derivative is 0 at 0, where |x| has none.
    return out, jnp.where(jnp.equal(primals[0], 0), 0.0, t_out)


_i0_core.defjvp(_i0_jvp)


def _i0_checked(x: Array) -> Array:
    (arr,) = promote_args_inexact("i0", x)
    if dtype_of(arr).kind != "f":
        raise ValueError(f"Unsupported input type to jax.numpy.i0: {dtype_of(arr)}")
    return _i0_core(arr)


_i0_checked.__name__ = _i0_checked.__qualname__ = "i0"  # JAX jits the API function itself
_i0 = Jitted(_i0_checked)


def i0(x: ArrayLike) -> Array:
    """The modified Bessel function of the first kind of order zero."""
    return _i0(x)


def kaiser(M: int, beta: ArrayLike) -> Array:
    """The Kaiser window of `M` points with shape parameter `beta`."""
    size: Any = M
    if isinstance(size, Tracer):
        _concrete(size, "M argument of jnp.kaiser")
    M = operator.index(size)
    dtype = _dtypes.canonicalize_dtype(_dtypes.float64)
    if M <= 1:
        return _lax.full((M,), 1, dtype)
    n = _lax.iota(dtype, M)
    alpha = 0.5 * (M - 1)
    ratio = jnp.divide(jnp.subtract(n, alpha), alpha)
    arg = jnp.multiply(beta, jnp.sqrt(jnp.subtract(1, jnp.power(ratio, 2))))
    return jnp.divide(i0(arg), i0(beta))


# --- polynomials ----------------------------------------------------------------------------


def _axis_tuple(axis: int | Sequence[int] | None, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(canonicalize_axis(a, ndim) for a in axes)


def trim_zeros(filt: ArrayLike, trim: str = "fb", axis: int | Sequence[int] | None = None) -> Array:
    """`filt` without its leading (`"f"` in `trim`) and trailing (`"b"`) zeros along the
    given axes (all by default); an all-zero array becomes empty. Needs concrete values."""
    (arr,) = ensure_arraylike("trim_zeros", filt)
    values = _concrete(arr, "Error arose in the `filt` argument of trim_zeros()")
    arr = jnp.asarray(arr, dtype=_dtypes.canonicalize_dtype(dtype_of(arr)))
    axes = set(_axis_tuple(axis, values.ndim))
    mode = trim.lower()
    if not axes or ("f" not in mode and "b" not in mode):
        return arr
    slices = []
    for ax in range(values.ndim):
        if ax not in axes:
            slices.append(slice(None))
            continue
        mask = values.any(axis=tuple(i for i in range(values.ndim) if i != ax))
        if not mask.any():
            slices.append(slice(0, 0))
            continue
        start = int(mask.argmax()) if "f" in mode else None
        stop = values.shape[ax] - int(mask[::-1].argmax()) if "b" in mode else None
        slices.append(slice(start, stop))
    return jnp.asarray(arr)[tuple(slices)]


def _trim_zeros_tol(filt: Any, tol: Any, trim: str = "fb") -> Any:
    values = _concrete(filt, "Error arose in the `filt` argument of trim_zeros_tol()")
    near_zero = np.asarray(jnp.less(jnp.absolute(values), tol))
    if near_zero.all():
        return jnp.empty(0, dtype_of(filt))
    start = int(np.argmin(near_zero)) if "f" in trim.lower() else 0
    end = int(np.argmin(near_zero[::-1])) if "b" in trim.lower() else 0
    return jnp.asarray(filt)[start : len(values) - end]


def _convolve_full(x: Any, y: Any) -> Any:
    """The full discrete convolution of two non-empty vectors of one inexact dtype."""
    if shape_of(x)[0] < shape_of(y)[0]:
        x, y = y, x
    nx, ny = shape_of(x)[0], shape_of(y)[0]
    y = jnp.flip(y)
    padded = _lax.pad(x, np.zeros((), dtype_of(x)), [(ny - 1, ny - 1, 0)])
    n_out = nx + ny - 1
    windows = np.arange(n_out)[:, None] + np.arange(ny)[None, :]
    return jnp.matmul(jnp.take(padded, windows, axis=0), y)


def polymul(a1: ArrayLike, a2: ArrayLike, *, trim_leading_zeros: bool = False) -> Array:
    """The product of two polynomials given by coefficients, highest power first."""
    a1, a2 = ensure_arraylike("polymul", a1, a2)
    p, q = promote_dtypes_inexact(a1, a2)
    if trim_leading_zeros and (len(p) > 1 or len(q) > 1):
        p, q = trim_zeros(p, trim="f"), trim_zeros(q, trim="f")
    if len(p) == 0:
        p = jnp.zeros(1, dtype=dtype_of(q))
    if len(q) == 0:
        q = jnp.zeros(1, dtype=dtype_of(p))
    if len(shape_of(p)) != 1 or len(shape_of(q)) != 1:
        raise ValueError("convolve() only support 1-dimensional inputs.")
    return _convolve_full(p, q)


@Jitted
def poly(seq_of_zeros: ArrayLike) -> Array:
    """The coefficients (highest power first) of the monic polynomial with the given roots,
    jitted as JAX's (one full convolution per root)."""
    (zeros_,) = promote_dtypes_inexact(*ensure_arraylike("poly", seq_of_zeros))
    zeros_ = jnp.atleast_1d(zeros_)
    shape = shape_of(zeros_)
    if len(shape) == 2 and shape[0] == shape[1] and shape[0] != 0:
        # A square matrix's roots are its eigenvalues.
        zeros_ = jnp.linalg.eigvals(zeros_)
        shape = shape_of(zeros_)
    if len(shape) != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    dtype = dtype_of(zeros_)
    if shape[0] == 0:
        return jnp.ones((), dtype=dtype)
    coeffs = jnp.ones((1,), dtype=dtype)
    for k in range(shape[0]):
        factor = jnp.array([1, jnp.negative(zeros_[k])], dtype=dtype)
        coeffs = jnp.convolve(coeffs, factor, mode="full")
    return coeffs


def polydiv(u: ArrayLike, v: ArrayLike, *, trim_leading_zeros: bool = False) -> tuple[Array, Array]:
    """The quotient and remainder of polynomial division of `u` by `v` (coefficients
    highest power first)."""
    u, v = ensure_arraylike("polydiv", u, v)
    num, den = promote_dtypes_inexact(u, v)
    m, n = len(num) - 1, len(den) - 1
    scale = jnp.divide(1.0, den[0])
    q = jnp.zeros(max(m - n + 1, 1), dtype=dtype_of(num))
    for k in range(m - n + 1):
        d = jnp.multiply(scale, num[k])
        q = _at(q)[k].set(d)
        num = _at(num)[k : k + n + 1].add(jnp.multiply(jnp.negative(d), den))
    if trim_leading_zeros:
        tol = np.sqrt(_dtypes.finfo(dtype_of(num)).eps)
        num = _trim_zeros_tol(num, tol=jnp.asarray(tol), trim="f")
    return q, num


# --- unwrap and gradient ----------------------------------------------------------------------


def _unwrap(p: Array, discont: Any = None, axis: int = -1, period: Any = 2 * np.pi) -> Array:
    (arr,) = ensure_arraylike("unwrap", p)
    arr, period = promote_dtypes(arr, period)
    if dtype_of(arr).kind == "c":
        raise ValueError("jnp.unwrap does not support complex inputs.")
    if shape_of(arr)[axis] == 0:
        return arr
    if discont is None:
        discont = jnp.divide(period, 2)
    halve = jnp.floor_divide if dtype_of(arr).kind in "iu" else jnp.divide
    interval = halve(period, 2)
    dd = jnp.diff(arr, axis=axis)
    ddmod = jnp.subtract(jnp.mod(jnp.add(dd, interval), period), interval)
    at_edge = jnp.logical_and(jnp.equal(ddmod, jnp.negative(interval)), jnp.greater(dd, 0))
    ddmod = jnp.where(at_edge, interval, ddmod)
    correction = jnp.where(jnp.less(jnp.absolute(dd), discont), 0, jnp.subtract(ddmod, dd))
    first = _lax.slice_in_dim(arr, 0, 1, axis=axis)
    rest = jnp.add(_lax.slice_in_dim(arr, 1, None, axis=axis), jnp.cumsum(correction, axis=axis))
    return jnp.concatenate((first, rest), axis=axis)


@partial(Jitted, static_argnames=("axis",))
def unwrap(
    p: ArrayLike, discont: ArrayLike | None = None, axis: int = -1, period: ArrayLike = 2 * np.pi
) -> Array:
    """`p` with jumps larger than `discont` along `axis` replaced by their complements
    modulo `period`."""
    return _unwrap(p, discont, axis=axis, period=period)


def _gradient_along(a: Any, h: Any, axis: int) -> Any:
    def piece(start: int | None, stop: int | None, x: Any = a) -> Any:
        return _lax.slice_in_dim(x, start, stop, axis=axis)

    first = jnp.subtract(piece(1, 2), piece(0, 1))
    last = jnp.subtract(piece(-1, None), piece(-2, -1))
    h_rank = len(shape_of(h))
    if h_rank == 0:
        inner = jnp.divide(jnp.multiply(jnp.subtract(piece(2, None), piece(None, -2)), 0.5), h)
        # JAX divides the last edge first.
        last = jnp.divide(last, h)
        return jnp.concatenate((jnp.divide(first, h), inner, last), axis=axis)
    if h_rank != 1:
        raise ValueError("Spacing arrays must be 1D arrays or scalars.")
    if shape_of(h)[0] != shape_of(a)[axis]:
        raise ValueError(
            "Spacing arrays must have the same length as the dimension along which the "
            "gradient is calculated."
        )
    h_shape = [1] * len(shape_of(a))
    h_shape[axis] = shape_of(h)[0]
    h = jnp.reshape(h, tuple(h_shape))

    def hp(start: int | None, stop: int | None) -> Any:
        return piece(start, stop, h)

    first = jnp.divide(first, jnp.subtract(hp(1, 2), hp(0, 1)))
    last = jnp.divide(last, jnp.subtract(hp(-1, None), hp(-2, -1)))
    dx1 = jnp.subtract(hp(1, -1), hp(0, -2))
    dx2 = jnp.subtract(hp(2, None), hp(1, -1))
    w0 = jnp.divide(jnp.negative(dx2), jnp.multiply(dx1, jnp.add(dx1, dx2)))
    w1 = jnp.divide(jnp.subtract(dx2, dx1), jnp.multiply(dx1, dx2))
    w2 = jnp.divide(dx1, jnp.multiply(dx2, jnp.add(dx1, dx2)))
    inner = jnp.add(
        jnp.add(jnp.multiply(w0, piece(0, -2)), jnp.multiply(w1, piece(1, -1))),
        jnp.multiply(w2, piece(2, None)),
    )
    return jnp.concatenate((first, inner, last), axis=axis)


def _gradient(
    f: Array, *varargs: Any, axis: int | Sequence[int] | None = None, edge_order: Any = None
) -> Array | list[Array]:
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
    a, *spacing_args = promote_dtypes_inexact(f, *varargs)
    shape = shape_of(a)
    axes = _axis_tuple(axis, len(shape))
    if len(axes) == 0:
        return []
    if min(s for i, s in enumerate(shape) if i in axes) < 2:
        raise ValueError(
            "Shape of array too small to calculate a numerical gradient, at least 2 elements "
            "are required."
        )
    dx: list[Any]
    if len(spacing_args) == 0:
        dx = [1.0] * len(axes)
    elif len(spacing_args) == 1:
        dx = list(spacing_args) * len(axes)
    elif len(spacing_args) == len(axes):
        dx = list(spacing_args)
    else:
        raise TypeError(f"Invalid number of spacing arguments {len(spacing_args)} for axis={axis}")
    grads = [_gradient_along(a, h, ax) for ax, h in zip(axes, dx, strict=True)]
    return grads[0] if len(axes) == 1 else grads


@partial(Jitted, static_argnames=("axis", "edge_order"))
def gradient(
    f: ArrayLike,
    *varargs: ArrayLike,
    axis: int | Sequence[int] | None = None,
    edge_order: int | None = None,
) -> Array | list[Array]:
    """Central differences of `f` inside and one-sided differences at the edges, along each
    axis; spacings are scalars or coordinate vectors, one for all axes or one per axis."""
    return _gradient(f, *varargs, axis=axis, edge_order=edge_order)
