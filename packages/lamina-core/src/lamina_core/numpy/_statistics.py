"""Statistics and cumulative reductions of `jax.numpy`: `average`, `cov`, `corrcoef`,
`nanvar`, `nanstd`, `nanargmax`, `nanargmin`, `nancumsum`, `nancumprod`, `trapezoid`."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

import lamina_core.numpy as jnp
from lamina_core import lax as _lax
from lamina_core.ir import dtypes as _dtypes
from lamina_core.lax import _convert_element_type
from lamina_core.numpy._promote import check_arraylike, promote_args_inexact, promote_dtypes_inexact
from lamina_core.numpy._reductions import (
    _optional_axes,
    _user_dtype,
    _var_dtypes,
    canonicalize_axis,
    check_where,
    ensure_arraylike,
)
from lamina_core.numpy._util import Array, ArrayLike, DTypeLike, shape_of
from lamina_core.trace import dispatched_at_top_level
from lamina_core.transforms import Jitted

Axis = int | tuple[int, ...] | None


def _axes(axis: int | Sequence[int] | None, nd: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(nd))
    if isinstance(axis, int):
        return (canonicalize_axis(axis, nd),)
    return tuple(canonicalize_axis(a, nd) for a in axis)


def average(
    a: ArrayLike, axis: Axis = None, weights: ArrayLike | None = None,
    returned: bool = False, keepdims: bool = False,
) -> Array | tuple[Array, Array]:  # fmt: skip
    """The mean of `a` along `axis`, weighted by `weights`; with `returned`, also the sum of
    the weights. Eagerly one dispatched call (JAX's `_average` is an inlined jit)."""
    result: Array | tuple[Array, Array] = _average(
        a, _optional_axes(axis), weights, returned, keepdims
    )
    return result


@dispatched_at_top_level(static_argnames=("axis", "returned", "keepdims"))
def _average(
    a: ArrayLike, axis: int | Sequence[int] | None = None, weights: ArrayLike | None = None,
    returned: bool = False, keepdims: bool = False,
) -> Array | tuple[Array, Array]:  # fmt: skip
    axes = _axes(axis, len(shape_of(a)))
    if weights is None:
        (a,) = promote_dtypes_inexact(*ensure_arraylike("average", a))
        avg = jnp.mean(a, axis=axis, keepdims=keepdims)
        count = math.prod(shape_of(a)[d] for d in axes)
        weights_sum = _lax.full((), count, dtype=avg.dtype)
    else:
        a, w = promote_dtypes_inexact(*ensure_arraylike("average", a, weights))
        ashape, wshape = shape_of(a), shape_of(w)
        if ashape != wshape:
            if axis is None:
                raise ValueError("Axis must be specified when shapes of a and weights differ.")
            if wshape != tuple(ashape[d] for d in axes):
                raise ValueError(
                    "Shape of weights must be consistent with shape of a along specified axis."
                )
            new_shape = tuple(d if i in axes else 1 for i, d in enumerate(ashape))
            w = _lax.reshape(w, new_shape, tuple(int(i) for i in np.argsort(axes)))
        weights_sum = jnp.sum(w, axis=axis, keepdims=keepdims)
        avg = jnp.sum(a * w, axis=axis, keepdims=keepdims) / weights_sum
    if returned:
        if shape_of(avg) != shape_of(weights_sum):
            weights_sum = jnp.broadcast_to(weights_sum, shape_of(avg))
        return avg, weights_sum
    return avg


@partial(Jitted, static_argnames=("axis", "dtype", "keepdims"))
def nanvar(
    a: ArrayLike, axis: Axis = None, dtype: DTypeLike | None = None, out: None = None,
    ddof: int = 0, keepdims: bool = False, where: ArrayLike | None = None,
    mean: ArrayLike | None = None,
) -> Array:  # fmt: skip
    """The variance of the elements that are not NaN (NaN where the count minus `ddof` is not
    positive), jitted as JAX's."""
    (a,) = ensure_arraylike("nanvar", a)
    where = check_where("nanvar", where)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.nanvar is not supported.")
    computation_dtype, result_dtype = _var_dtypes(
        a.dtype, None if dtype is None else _user_dtype(dtype)
    )
    a = _convert_element_type(a, computation_dtype, False)
    if mean is None:
        mean = jnp.nanmean(a, axis, dtype=computation_dtype, keepdims=True, where=where)
    else:
        (mean,) = ensure_arraylike("nanvar", mean)
        mean = _convert_element_type(mean, computation_dtype, False)
    is_nan = _lax.ne(a, a)
    centered = jnp.where(is_nan, 0, _lax.sub(a, mean))
    if _dtypes.issubdtype(centered.dtype, np.complexfloating):
        centered = _lax.real(_lax.mul(centered, _lax.conj(centered)))
    else:
        centered = _lax.square(centered)
    count = jnp.sum(_lax.bitwise_not(_lax.ne(a, a)), axis=axis, keepdims=keepdims, where=where)
    count = count - ddof
    empty = _lax.le(count, _convert_element_type(0, count.dtype, False))
    total = jnp.sum(centered, axis, keepdims=keepdims, where=where)
    total = jnp.where(empty, np.nan, total)
    divisor = jnp.where(empty, 1, count)
    total = _lax.div(total, _convert_element_type(divisor, total.dtype, False))
    return _convert_element_type(total, result_dtype, False)


@partial(Jitted, static_argnames=("axis", "dtype", "keepdims"))
def nanstd(
    a: ArrayLike, axis: Axis = None, dtype: DTypeLike | None = None, out: None = None,
    ddof: int = 0, keepdims: bool = False, where: ArrayLike | None = None,
    mean: ArrayLike | None = None,
) -> Array:  # fmt: skip
    """The standard deviation of the elements that are not NaN, jitted as JAX's."""
    (a,) = ensure_arraylike("nanstd", a)
    where = check_where("nanstd", where)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.nanstd is not supported.")
    return _lax.sqrt(nanvar(a, axis=axis, dtype=None if dtype is None else _user_dtype(dtype),
                            ddof=ddof, keepdims=keepdims, where=where, mean=mean))  # fmt: skip


def _nanarg(pick: Any, fill: float, a: Array, axis: int | None, keepdims: bool) -> Array:
    if not _dtypes.issubdtype(a.dtype, np.inexact):
        return pick(a, axis=axis, keepdims=keepdims)
    is_nan = jnp.isnan(a)
    index = pick(jnp.where(is_nan, fill, a), axis=axis, keepdims=keepdims)
    return jnp.where(jnp.all(is_nan, axis=axis, keepdims=keepdims), -1, index)


@partial(Jitted, static_argnames=("axis", "keepdims"))
def _nanargmax(a: Array, axis: int | None = None, keepdims: bool = False) -> Array:
    return _nanarg(jnp.argmax, -np.inf, a, axis, keepdims)


@partial(Jitted, static_argnames=("axis", "keepdims"))
def _nanargmin(a: Array, axis: int | None = None, keepdims: bool = False) -> Array:
    return _nanarg(jnp.argmin, np.inf, a, axis, keepdims)


def nanargmax(
    a: ArrayLike, axis: int | None = None, out: None = None, keepdims: bool | None = None
) -> Array:
    """The index of the maximum ignoring NaNs (-1 where a slice is all NaN), one jitted call
    (`_nanargmax`, as JAX stages it)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.nanargmax is not supported.")
    (a,) = ensure_arraylike("nanargmax", a)
    return _nanargmax(a, None if axis is None else operator.index(axis), keepdims=bool(keepdims))


def nanargmin(
    a: ArrayLike, axis: int | None = None, out: None = None, keepdims: bool | None = None
) -> Array:
    """The index of the minimum ignoring NaNs (-1 where a slice is all NaN), one jitted call
    (`_nanargmin`, as JAX stages it)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.nanargmin is not supported.")
    (a,) = ensure_arraylike("nanargmin", a)
    return _nanargmin(a, None if axis is None else operator.index(axis), keepdims=bool(keepdims))


@partial(Jitted, static_argnames=("axis",))
def trapezoid(
    y: ArrayLike, x: ArrayLike | None = None, dx: ArrayLike = 1.0, axis: int = -1
) -> Array:
    """The integral of `y` along `axis` by the trapezoidal rule (samples at `x`, or `dx`
    apart), jitted as JAX's: one spacing for all intervals scales the sum less the halved
    ends."""
    if x is None:
        (y,) = promote_dtypes_inexact(*ensure_arraylike("trapezoid", y))
        dx_ = jnp.asarray(dx)
        if len(shape_of(dx_)) > 0:
            dx_ = _lax.expand_dims(dx_, range(len(shape_of(y)) - len(shape_of(dx_))))
            dx_ = jnp.moveaxis(dx_, axis, -1)
    else:
        y, x = promote_dtypes_inexact(*ensure_arraylike("trapezoid", y, x))
        if len(shape_of(x)) == 1:
            dx_ = jnp.diff(x)
        else:
            dx_ = jnp.moveaxis(jnp.diff(x, axis=axis), axis, -1)
    y = jnp.moveaxis(y, axis, -1)
    dx_shape = shape_of(dx_)
    if len(dx_shape) == 0 or dx_shape[-1] == 1:
        step = dx_ if len(dx_shape) == 0 else dx_[..., 0]
        total = jnp.sum(y, -1)
        ends = jnp.multiply(0.5, jnp.add(y[..., 0], y[..., -1]))
        return jnp.multiply(step, jnp.subtract(total, ends))
    return jnp.multiply(0.5, jnp.sum(jnp.multiply(dx_, jnp.add(y[..., 1:], y[..., :-1])), -1))


def _cov_weights(X: Any, fweights: ArrayLike | None, aweights: ArrayLike | None) -> tuple[Any, Any]:
    """`cov`'s observation weights (frequency times analytic, made non-negative) and the
    checked analytic weights; None where not given."""
    w: Any = None
    n = shape_of(X)[1]
    if fweights is not None:
        (fweights,) = ensure_arraylike("cov", fweights)
        if len(shape_of(fweights)) > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if shape_of(fweights)[0] != n:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if not _dtypes.issubdtype(fweights.dtype, np.integer):
            raise TypeError("fweights must be integer.")
        w = jnp.abs(fweights)
    if aweights is not None:
        (aweights,) = ensure_arraylike("cov", aweights)
        if len(shape_of(aweights)) > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if shape_of(aweights)[0] != n:
            raise RuntimeError("incompatible numbers of samples and aweights")
        aweights = jnp.abs(aweights)
        w = jnp.asarray(aweights if w is None else w * aweights)
    return w, aweights


@partial(Jitted, static_argnames=("rowvar", "bias", "ddof", "dtype"))
def cov(
    m: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True, bias: bool = False,
    ddof: int | None = None, fweights: ArrayLike | None = None,
    aweights: ArrayLike | None = None, dtype: DTypeLike | None = None,
) -> Array:  # fmt: skip
    """The covariance matrix of the variables (rows of `m`, with `rowvar`), optionally with
    frequency and analytic observation weights; jitted as JAX's."""
    if y is not None:
        m, y = promote_args_inexact("cov", m, y)
        if len(shape_of(y)) > 2:
            raise ValueError("y has more than 2 dimensions")
    else:
        (m,) = promote_args_inexact("cov", m)
    if len(shape_of(m)) > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is not None and not _dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(f"cov: dtype must be a subclass of float or complex; got {dtype=}")
    X = jnp.atleast_2d(m)
    if not rowvar and len(shape_of(m)) != 1:
        X = X.T
    if shape_of(X)[0] == 0:
        return jnp.array([]).reshape(0, 0)
    if y is not None:
        y_2d = jnp.atleast_2d(y)
        if not rowvar and shape_of(y_2d)[0] != 1:
            y_2d = y_2d.T
        X = jnp.concatenate((X, y_2d), axis=0)
    if shape_of(X)[1] == 0:
        rows = shape_of(X)[0]
        return jnp.full(() if rows == 1 else (rows, rows), np.nan, dtype=X.dtype)
    if ddof is None:
        ddof = 1 if bias == 0 else 0
    w, aweights = _cov_weights(X, fweights, aweights)
    if dtype is not None:
        X = X.astype(dtype)
        w = w.astype(dtype) if w is not None else w
    avg, w_sum = jnp.average(X, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    f: Any
    if w is None:
        f = shape_of(X)[1] - ddof
    elif ddof == 0:
        f = w_sum
    elif aweights is None:
        f = w_sum - ddof
    else:
        f = w_sum - ddof * jnp.sum(w * aweights) / w_sum
    X = X - avg[:, None]
    X_T = X.T if w is None else (X * _lax.broadcast_to_rank(w, len(shape_of(X)))).T
    return jnp.true_divide(jnp.dot(X, X_T.conj()), f).squeeze()


@partial(Jitted, static_argnames=("rowvar", "dtype"))
def corrcoef(
    x: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True,
    dtype: DTypeLike | None = None,
) -> Array:  # fmt: skip
    """Pearson correlation coefficients (`cov` normalized by the standard deviations, clipped
    to [-1, 1]), jitted as JAX's."""
    check_arraylike("corrcoef", x)
    if dtype is not None and not _dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(f"corrcoef: dtype must be a subclass of float or complex; got {dtype=}")
    c = cov(x, y, rowvar, dtype=dtype)
    if len(shape_of(c)) == 0:
        # A scalar: NaN for nan/nan, inf/inf and 0/0, else one.
        return jnp.divide(c, c)
    d = jnp.diag(c)
    stddev = jnp.sqrt(jnp.real(d)).astype(c.dtype)
    c = c / stddev[:, None] / stddev[None, :]
    real_part = jnp.clip(jnp.real(c), -1, 1)
    if _dtypes.issubdtype(c.dtype, np.complexfloating):
        return _lax.complex(real_part, jnp.clip(jnp.imag(c), -1, 1))
    return real_part


__all__ = [
    "average",
    "corrcoef",
    "cov",
    "nanargmax",
    "nanargmin",
    "nanstd",
    "nanvar",
    "trapezoid",
]
