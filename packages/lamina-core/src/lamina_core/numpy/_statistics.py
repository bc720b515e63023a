"""Statistics and cumulative reductions of `jax.numpy`: `average`, `cov`, `corrcoef`,
`nanvar`, `nanstd`, `nanargmax`, `nanargmin`, `nancumsum`, `nancumprod`, `cumulative_sum`,
`cumulative_prod`, `trapezoid`."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import lamina_core.numpy as jnp
from lamina_core import dtypes as _dtypes
from lamina_core import lax as _lax
from lamina_core.numpy._nan_reductions import nan_as
from lamina_core.numpy._promote import promote_dtypes_inexact
from lamina_core.numpy._reductions import canonicalize_axis, ensure_arraylike
from lamina_core.numpy._util import Array, ArrayLike, DTypeLike, shape_of

Axis = int | tuple[int, ...] | None


def _axes(axis: Axis, nd: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(nd))
    return tuple(canonicalize_axis(a, nd) for a in (axis if isinstance(axis, tuple) else (axis,)))


def average(
    a: ArrayLike, axis: Axis = None, weights: ArrayLike | None = None,
    returned: bool = False, keepdims: bool = False,
) -> Array | tuple[Array, Array]:  # fmt: skip
    """The mean of `a` along `axis`, weighted by `weights`; with `returned`, also the sum of
    the weights."""
    if weights is None:
        (a,) = promote_dtypes_inexact(*ensure_arraylike("average", a))
        avg = jnp.mean(a, axis=axis, keepdims=keepdims)
        count = math.prod(shape_of(a)[d] for d in _axes(axis, len(shape_of(a))))
        weights_sum = jnp.full((), count, dtype=avg.dtype)
    else:
        a, w = promote_dtypes_inexact(*ensure_arraylike("average", a, weights))
        ashape, wshape = shape_of(a), shape_of(w)
        if ashape != wshape:
            if axis is None:
                raise ValueError("Axis must be specified when shapes of a and weights differ.")
            axes = _axes(axis, len(ashape))
            if wshape != tuple(ashape[d] for d in axes):
                raise ValueError(
                    "Shape of weights must be consistent with shape of a along specified axis."
                )
            order = np.argsort(axes)
            w = jnp.transpose(w, tuple(int(i) for i in np.argsort(order)))
            w = _lax.reshape(w, tuple(d if i in axes else 1 for i, d in enumerate(ashape)))
        weights_sum = jnp.sum(w, axis=axis, keepdims=keepdims)
        avg = jnp.sum(a * w, axis=axis, keepdims=keepdims) / weights_sum
    if returned:
        if shape_of(avg) != shape_of(weights_sum):
            weights_sum = jnp.broadcast_to(weights_sum, shape_of(avg))
        return avg, weights_sum
    return avg


def _nan_moments(a: Any, axis: Axis, ddof: int, keepdims: bool) -> tuple[Any, Any]:
    (a,) = promote_dtypes_inexact(*ensure_arraylike("nanvar", a))
    nan = jnp.isnan(a)
    count = jnp.sum(jnp.logical_not(nan), axis=axis, keepdims=True)
    mean = jnp.sum(jnp.where(nan, jnp.zeros_like(a), a), axis=axis, keepdims=True) / count
    centered = jnp.where(nan, jnp.zeros_like(a), a - mean)
    if _dtypes.issubdtype(a.dtype, np.complexfloating):
        squares = jnp.real(centered * jnp.conj(centered))
    else:
        squares = centered * centered
    total = jnp.sum(squares, axis=axis, keepdims=keepdims)
    n = jnp.sum(jnp.logical_not(nan), axis=axis, keepdims=keepdims)
    dof = jnp.maximum(n - ddof, 0).astype(total.dtype)
    return total, dof


def nanvar(
    a: ArrayLike, axis: Axis = None, dtype: DTypeLike | None = None, out: None = None,
    ddof: int = 0, keepdims: bool = False,
) -> Array:  # fmt: skip
    """The variance of the elements that are not NaN."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.nanvar is not supported.")
    total, dof = _nan_moments(a, axis, ddof, keepdims)
    result = jnp.where(dof == 0, jnp.full_like(total, np.nan), total / dof)
    return result if dtype is None else result.astype(dtype)


def nanstd(
    a: ArrayLike, axis: Axis = None, dtype: DTypeLike | None = None, out: None = None,
    ddof: int = 0, keepdims: bool = False,
) -> Array:  # fmt: skip
    """The standard deviation of the elements that are not NaN."""
    return jnp.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims))


def _nanarg(name: str, pick: Any, fill: float, a: ArrayLike, axis: int | None,
            keepdims: bool) -> Array:  # fmt: skip
    (a,) = ensure_arraylike(name, a)
    if not _dtypes.issubdtype(a.dtype, np.inexact):
        return pick(a, axis=axis, keepdims=keepdims)
    nan = jnp.isnan(a)
    index = pick(jnp.where(nan, jnp.full_like(a, fill), a), axis=axis, keepdims=keepdims)
    all_nan = jnp.all(nan, axis=axis, keepdims=keepdims)
    return jnp.where(all_nan, jnp.full_like(index, -1), index)


def nanargmax(
    a: ArrayLike, axis: int | None = None, out: None = None, keepdims: bool | None = None
) -> Array:
    """The index of the maximum ignoring NaNs (-1 where a slice is all NaN)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.nanargmax is not supported.")
    return _nanarg("nanargmax", jnp.argmax, -np.inf, a, axis, bool(keepdims))


def nanargmin(
    a: ArrayLike, axis: int | None = None, out: None = None, keepdims: bool | None = None
) -> Array:
    """The index of the minimum ignoring NaNs (-1 where a slice is all NaN)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.nanargmin is not supported.")
    return _nanarg("nanargmin", jnp.argmin, np.inf, a, axis, bool(keepdims))


def nancumsum(
    a: ArrayLike, axis: int | None = None, dtype: DTypeLike | None = None, out: None = None
) -> Array:
    """The cumulative sum, NaNs counted as zero."""
    (a,) = ensure_arraylike("nancumsum", a)
    return jnp.cumsum(nan_as(a, 0), axis=axis, dtype=dtype, out=out)


def nancumprod(
    a: ArrayLike, axis: int | None = None, dtype: DTypeLike | None = None, out: None = None
) -> Array:
    """The cumulative product, NaNs counted as one."""
    (a,) = ensure_arraylike("nancumprod", a)
    return jnp.cumprod(nan_as(a, 1), axis=axis, dtype=dtype, out=out)


def _cumulative(name: str, what: str, op_name: str, initial: int) -> Any:
    def cumulative(
        x: ArrayLike, /, *, axis: int | None = None, dtype: DTypeLike | None = None,
        include_initial: bool = False,
    ) -> Array:  # fmt: skip
        (x,) = ensure_arraylike(name, x)
        nd = len(shape_of(x))
        if nd == 0:
            raise ValueError(
                f"The input must be non-scalar to take a cumulative {what}, however a scalar "
                "value or scalar array was given."
            )
        if axis is None:
            if nd > 1:
                raise ValueError(
                    f"The input array has rank {nd}, however axis was not set to an explicit "
                    "value. The axis argument is only optional for one-dimensional arrays."
                )
            axis = 0
        axis = canonicalize_axis(axis, nd)
        out = getattr(jnp, op_name)(x, axis=axis, dtype=dtype)
        if include_initial:
            shape = list(shape_of(x))
            shape[axis] = 1
            out = jnp.concatenate([jnp.full(tuple(shape), initial, out.dtype), out], axis)
        return out

    cumulative.__name__ = name
    cumulative.__doc__ = f"The cumulative {what} along `axis` (the array API's `{name}`)."
    return cumulative


cumulative_sum = _cumulative("cumulative_sum", "sum", "cumsum", 0)
cumulative_prod = _cumulative("cumulative_prod", "product", "cumprod", 1)


def trapezoid(
    y: ArrayLike, x: ArrayLike | None = None, dx: ArrayLike = 1.0, axis: int = -1
) -> Array:
    """The integral of `y` along `axis` by the trapezoidal rule (samples at `x`, or `dx`
    apart)."""
    if x is None:
        (y,) = promote_dtypes_inexact(*ensure_arraylike("trapezoid", y))
        dx_ = jnp.asarray(dx)
    else:
        y, x = promote_dtypes_inexact(*ensure_arraylike("trapezoid", y, x))
        if len(shape_of(x)) == 1:
            dx_ = jnp.diff(x)
        else:
            dx_ = jnp.moveaxis(jnp.diff(x, axis=axis), axis, -1)
    y = jnp.moveaxis(y, axis, -1)
    return 0.5 * jnp.sum(dx_ * (y[..., 1:] + y[..., :-1]), axis=-1)


def cov(
    m: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True, bias: bool = False,
    ddof: int | None = None, fweights: ArrayLike | None = None,
    aweights: ArrayLike | None = None,
) -> Array:  # fmt: skip
    """The covariance matrix of the variables (rows of `m`, with `rowvar`)."""
    if fweights is not None or aweights is not None:
        raise NotImplementedError("jnp.cov with fweights or aweights is not supported yet")
    (m,) = promote_dtypes_inexact(*ensure_arraylike("cov", m))
    if len(shape_of(m)) > 2:
        raise ValueError("m has more than 2 dimensions")
    x = jnp.atleast_2d(m)
    if not rowvar and shape_of(x)[0] != 1:
        x = x.T
    if shape_of(x)[0] == 0:
        return jnp.array([]).reshape(0, 0)
    if y is not None:
        (yy,) = promote_dtypes_inexact(*ensure_arraylike("cov", y))
        yy = jnp.atleast_2d(yy)
        if not rowvar and shape_of(yy)[0] != 1:
            yy = yy.T
        x = jnp.concatenate([x, yy], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    n = shape_of(x)[1]
    centered = x - jnp.mean(x, axis=1, keepdims=True)
    fact = max(n - ddof, 0)
    result = jnp.matmul(centered, jnp.conj(centered).T) / fact
    return jnp.squeeze(result)


def corrcoef(x: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True) -> Array:
    """Pearson correlation coefficients (`cov` normalized by the standard deviations)."""
    c = cov(x, y, rowvar)
    if len(shape_of(c)) == 0:
        return jnp.divide(c, c)
    d = jnp.diag(c)
    stddev = jnp.sqrt(jnp.real(d)).astype(c.dtype)
    c = c / stddev[:, None]
    c = c / stddev[None, :]
    if _dtypes.issubdtype(c.dtype, np.complexfloating):
        return jnp.clip(jnp.real(c), -1, 1) + 1j * jnp.clip(jnp.imag(c), -1, 1)
    return jnp.clip(c, -1, 1)


__all__ = [
    "average",
    "corrcoef",
    "cov",
    "cumulative_prod",
    "cumulative_sum",
    "nanargmax",
    "nanargmin",
    "nancumprod",
    "nancumsum",
    "nanstd",
    "nanvar",
    "trapezoid",
]
