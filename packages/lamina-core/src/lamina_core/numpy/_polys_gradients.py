"""The Bessel function `i0` and the Kaiser window, polynomial helpers (`trim_zeros`,
`polymul`, `poly`, `polydiv`), phase unwrapping and numerical gradients of `jax.numpy`,
computed with the same lax operations as JAX 0.10.2 so values agree."""

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
from lamina_core.numpy._index_update import at as _at
from lamina_core.numpy._promote import (
    promote_args_inexact,
    promote_dtypes,
    promote_dtypes_inexact,
)
from lamina_core.numpy._reductions import canonicalize_axis, ensure_arraylike
from lamina_core.numpy._util import Array, ArrayLike, dtype_of, shape_of
from lamina_core.trace import Tracer, concrete_or_error
from lamina_core.transforms import Jitted, jvp

__all__ = [
    "gradient",
    "i0",
    "kaiser",
    "poly",
    "polydiv",
    "polymul",
    "trim_zeros",
    "unwrap",
]


def _concrete(x: Any, context: str) -> Any:
    """`x` as a NumPy array, or JAX's error when it is traced."""
    return np.asarray(concrete_or_error(x, context))


# --- Bessel i0 and the Kaiser window ------------------------------------------------------


def _i0_kernel(x: Any) -> Any:
    ax = _lax.abs(x)
    return _lax.mul(_lax.exp(ax), _lax.bessel_i0e(ax))


_i0_kernel.__name__ = _i0_kernel.__qualname__ = "_i0"  # the name JAX's rule prints
_i0_core = custom_jvp(_i0_kernel)


def _i0_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
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
