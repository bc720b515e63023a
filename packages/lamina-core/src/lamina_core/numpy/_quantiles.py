"""Order statistics: `quantile`, `percentile`, `median` and their NaN-ignoring forms, with
`jax.numpy`'s methods (`linear`, `lower`, `higher`, `midpoint`, `nearest`): the reduced axes
are sorted, and each quantile reads (and interpolates between) two order statistics."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import lamina_core.numpy as jnp
from lamina_core import dtypes as _dtypes
from lamina_core import lax as _lax
from lamina_core.numpy._promote import promote_dtypes_inexact
from lamina_core.numpy._reductions import canonicalize_axis, ensure_arraylike
from lamina_core.numpy._util import Array, ArrayLike, shape_of

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")
Axis = int | tuple[int, ...] | None


def _quantile(a: Any, q: Any, axis: Axis, method: str, keepdims: bool, squash_nans: bool) -> Array:
    if method not in _METHODS:
        if method == "inverted_cdf":
            raise NotImplementedError("quantile method 'inverted_cdf' (weights) is not supported")
        raise ValueError(
            "method can only be 'linear', 'lower', 'higher', 'midpoint', 'nearest' or "
            "'inverted_cdf'"
        )
    (a,) = promote_dtypes_inexact(a)
    if _dtypes.issubdtype(a.dtype, np.complexfloating):
        raise ValueError(
            "quantile does not support complex input, as the operation is poorly defined."
        )
    shape = shape_of(a)
    nd = len(shape)
    if axis is None:
        axes = tuple(range(nd))
    else:
        axes = tuple(
            canonicalize_axis(ax, nd) for ax in (axis if isinstance(axis, tuple) else (axis,))
        )
        if len(set(axes)) != len(axes):
            raise ValueError("repeated axis")
    q_shape = shape_of(q)
    if len(q_shape) > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {q_shape}")
    kept = [d for d in range(nd) if d not in axes]
    kept_shape = tuple(shape[d] for d in kept)
    n = math.prod(shape[d] for d in axes)
    data = _lax.reshape(jnp.transpose(a, (*kept, *axes)), (*kept_shape, n))
    q = q.astype(a.dtype) if q.dtype != a.dtype else q
    nan = jnp.isnan(data)
    ordered = _lax.sort(data, dimension=len(kept_shape))  # NaNs sort last
    if squash_nans:
        counts = jnp.sum(jnp.logical_not(nan), axis=-1).astype(a.dtype)
    else:
        counts = jnp.full(kept_shape, n, a.dtype)
    qb = _lax.reshape(q, (*q_shape, *(1,) * len(kept_shape)))
    pos = jnp.multiply(qb, jnp.subtract(counts, 1))
    low, high = jnp.floor(pos), jnp.ceil(pos)
    high_weight = jnp.subtract(pos, low)
    low_weight = jnp.subtract(1, high_weight)
    top = jnp.subtract(counts, 1)
    low = jnp.maximum(0, jnp.minimum(low, top)).astype(np.int32)
    high = jnp.maximum(0, jnp.minimum(high, top)).astype(np.int32)
    out_shape = (*q_shape, *kept_shape)
    spread = jnp.broadcast_to(ordered, (*out_shape, n))
    low_value = jnp.take_along_axis(
        spread, jnp.expand_dims(jnp.broadcast_to(low, out_shape), -1), -1
    )[..., 0]
    high_value = jnp.take_along_axis(
        spread, jnp.expand_dims(jnp.broadcast_to(high, out_shape), -1), -1
    )[..., 0]
    if method == "linear":
        result = low_value * low_weight + high_value * high_weight
    elif method == "lower":
        result = low_value
    elif method == "higher":
        result = high_value
    elif method == "nearest":
        result = jnp.where(jnp.less_equal(high_weight, 0.5), low_value, high_value)
    else:
        result = (low_value + high_value) * np.asarray(0.5, a.dtype)
    result = jnp.broadcast_to(result, out_shape)
    if not squash_nans:
        result = jnp.where(jnp.any(nan, axis=-1), jnp.full((), np.nan, a.dtype), result)
    if keepdims:
        full = [1 if d in axes else shape[d] for d in range(nd)]
        result = _lax.reshape(result, (*q_shape, *full))
    return result.astype(a.dtype)


def _checked(name: str, a: ArrayLike, q: ArrayLike, overwrite_input: bool, out: Any) -> Any:
    if overwrite_input or out is not None:
        raise ValueError(f"jax.numpy.{name} does not support overwrite_input=True or out != None")
    return ensure_arraylike(name, a, q)


def quantile(
    a: ArrayLike, q: ArrayLike, axis: Axis = None, out: None = None,
    overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
) -> Array:  # fmt: skip
    """The `q`-th quantiles (`q` in [0, 1], a scalar or 1-D) of `a` along `axis`."""
    a, q = _checked("quantile", a, q, overwrite_input, out)
    return _quantile(a, q, axis, method, keepdims, squash_nans=False)


def nanquantile(
    a: ArrayLike, q: ArrayLike, axis: Axis = None, out: None = None,
    overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
) -> Array:  # fmt: skip
    """`quantile` of the elements that are not NaN."""
    a, q = _checked("nanquantile", a, q, overwrite_input, out)
    return _quantile(a, q, axis, method, keepdims, squash_nans=True)


def percentile(
    a: ArrayLike, q: ArrayLike, axis: Axis = None, out: None = None,
    overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
) -> Array:  # fmt: skip
    """The `q`-th percentiles (`q` in [0, 100]) of `a` along `axis`."""
    a, q = _checked("percentile", a, q, overwrite_input, out)
    (q,) = promote_dtypes_inexact(q)
    return _quantile(a, jnp.true_divide(q, 100.0), axis, method, keepdims, squash_nans=False)


def nanpercentile(
    a: ArrayLike, q: ArrayLike, axis: Axis = None, out: None = None,
    overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
) -> Array:  # fmt: skip
    """`percentile` of the elements that are not NaN."""
    a, q = _checked("nanpercentile", a, q, overwrite_input, out)
    (q,) = promote_dtypes_inexact(q)
    return _quantile(a, jnp.true_divide(q, 100.0), axis, method, keepdims, squash_nans=True)


def median(
    a: ArrayLike, axis: Axis = None, out: None = None, overwrite_input: bool = False,
    keepdims: bool = False,
) -> Array:  # fmt: skip
    """The median along `axis` (the mean of the two middle values for even counts)."""
    return quantile(a, 0.5, axis, out, overwrite_input, "midpoint", keepdims)


def nanmedian(
    a: ArrayLike, axis: Axis = None, out: None = None, overwrite_input: bool = False,
    keepdims: bool = False,
) -> Array:  # fmt: skip
    """The median of the elements that are not NaN."""
    return nanquantile(a, 0.5, axis, out, overwrite_input, "midpoint", keepdims)


__all__ = [
    "median",
    "nanmedian",
    "nanpercentile",
    "nanquantile",
    "percentile",
    "quantile",
]
