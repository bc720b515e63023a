"""Order statistics: `quantile`, `percentile`, `median` and their NaN-ignoring forms, with
`jax.numpy`'s methods (`linear`, `lower`, `higher`, `midpoint`, `nearest`, and the weighted
`inverted_cdf` of `_quantile_cdf`): the reduced axes are sorted, and each quantile reads (and
interpolates between) two order statistics. Each is jitted with JAX's static arguments and
staged as JAX stages it."""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import numpy as np

import lamina_core.numpy as jnp
from lamina_core import lax as _lax
from lamina_core.ir import NamedSharding, PartitionSpec, canonicalize_sharding
from lamina_core.ir import dtypes as _dtypes
from lamina_core.lax import under_auto_axes
from lamina_core.numpy._promote import promote_dtypes_inexact
from lamina_core.numpy._quantile_cdf import inverted_cdf
from lamina_core.numpy._reductions import canonicalize_axis, ensure_arraylike
from lamina_core.numpy._util import Array, ArrayLike, shape_of
from lamina_core.transforms import Jitted

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")
Axis = int | tuple[int, ...] | None
_QUANTILE_STATICS = ("axis", "overwrite_input", "keepdims", "method")


def _reduced_last(a: Any, axis: tuple[int, ...]) -> Any:
    """`a` with the (distinct) axes of `axis` merged into one last axis, kept ones first in
    the order JAX's swap-based permutation gives them."""
    shape = shape_of(a)
    nd = len(shape)
    if len(set(axis)) != len(axis):
        raise ValueError("repeated axis")
    order = list(range(nd))
    for i, d in enumerate(sorted(set(range(nd)) - set(axis))):
        order[i], order[d] = order[d], order[i]
    kept = tuple(n for d, n in enumerate(shape) if d not in axis)
    merged = math.prod(n for d, n in enumerate(shape) if d in axis)
    return _lax.reshape(a, (*kept, merged), order)


def _order_statistics(a: Any, q: Any, axis: int, keepdims: bool) -> tuple[Any, ...]:
    """(low value, high value, low weight, high weight) over all of `axis`, NaNs already
    made to spread over their slices."""
    q_nd = len(shape_of(q))
    size = shape_of(a)[axis]
    zero, one, n = (np.array(v, q.dtype) for v in (0, 1, size))
    pos = _lax.mul(q, _lax.sub(n, one))
    low, high = _lax.floor(pos), _lax.ceil(pos)
    high_weight = _lax.sub(pos, low)
    low_weight = _lax.sub(one, high_weight)
    index_dtype = _dtypes.canonicalize_dtype(int)
    low = _lax.clamp(zero, low, _lax.sub(n, one))
    high = _lax.clamp(zero, high, _lax.sub(n, one))
    low = _lax.convert_element_type(low, index_dtype)
    high = _lax.convert_element_type(high, index_dtype)
    shape = shape_of(a)
    sizes = list(shape)
    sizes[axis] = 1
    dnums = _lax.GatherDimensionNumbers(
        offset_dims=tuple(range(q_nd, len(shape) + q_nd - (0 if keepdims else 1))),
        collapsed_slice_dims=() if keepdims else (axis,),
        start_index_map=(axis,),
    )
    low_value = _lax.gather(a, low[..., None], dimension_numbers=dnums, slice_sizes=sizes)
    high_value = _lax.gather(a, high[..., None], dimension_numbers=dnums, slice_sizes=sizes)
    if q_nd == 1:
        low_weight = _lax.broadcast_in_dim(low_weight, shape_of(low_value), (0,))
        high_weight = _lax.broadcast_in_dim(high_weight, shape_of(high_value), (0,))
    return low_value, high_value, low_weight, high_weight


def _nan_order_statistics(a: Any, q: Any, axis: int, keepdims: bool) -> tuple[Any, ...]:
    """`_order_statistics` over the elements that are not NaN (which sort last)."""
    q_nd = len(shape_of(q))
    counts = jnp.sum(_lax.bitwise_not(_lax.ne(a, a)), axis=axis, dtype=q.dtype, keepdims=keepdims)
    reduced = shape_of(counts)
    q = _lax.expand_dims(q, tuple(range(q_nd, len(reduced) + q_nd)))
    counts = _lax.expand_dims(counts, tuple(range(q_nd)))
    pos = _lax.mul(q, _lax.sub(counts, np.array(1, q.dtype)))
    low, high = _lax.floor(pos), _lax.ceil(pos)
    high_weight = _lax.sub(pos, low)
    low_weight = _lax.sub(np.array(1, q.dtype), high_weight)
    index_dtype = _dtypes.canonicalize_dtype(int)
    low = _lax.max(np.array(0, q.dtype), _lax.min(low, counts - 1))
    high = _lax.max(np.array(0, q.dtype), _lax.min(high, counts - 1))
    low = _lax.convert_element_type(low, index_dtype)
    high = _lax.convert_element_type(high, index_dtype)
    out_shape = shape_of(q)[:q_nd] + reduced
    index: list[Any] = [
        _lax.broadcasted_iota(index_dtype, out_shape, d + q_nd) for d in range(len(reduced))
    ]
    if keepdims:
        index[axis] = low
    else:
        index.insert(axis, low)
    low_value = a[tuple(index)]
    index[axis] = high
    high_value = a[tuple(index)]
    return low_value, high_value, low_weight, high_weight


def _weighed(a: Any, weights: Any, axis: Axis, method: str) -> tuple[Any, Any]:
    """`a` and `weights` promoted together, `weights` broadcast along the reduced axes.

    Raises:
        ValueError: complex weights, or weights shaped as neither `a` nor its reduced axes.
        NotImplementedError: a `method` other than `inverted_cdf`.
    """
    if _dtypes.issubdtype(weights.dtype, np.complexfloating):
        raise ValueError("Weights cannot be complex types.")
    if method != "inverted_cdf":
        raise NotImplementedError(
            f"{method} doesn't support weights. Only method 'inverted_cdf' supports weights."
        )
    a, weights = promote_dtypes_inexact(a, weights)
    shape = shape_of(a)
    if shape_of(weights) != shape:
        if axis is None:
            raise ValueError("Weights shape must match 'a' shape when axis is None.")
        axes = axis if isinstance(axis, tuple) else (axis,)
        axes = tuple(canonicalize_axis(ax, len(shape)) for ax in axes)
        reduced = tuple(shape[ax] for ax in axes)
        if shape_of(weights) != reduced:
            raise ValueError(
                f"Weights shape {shape_of(weights)} must match reduction axes {reduced}"
            )
        weights = _lax.broadcast_in_dim(weights, shape, axes)
    return a, weights


def _sorted(a: Any, weights: Any, axis: int) -> tuple[Any, Any]:
    if weights is None:
        return _lax.sort(a, dimension=axis), None
    return _lax.sort_key_val(a, weights, dimension=axis)


def _quantile(
    a: Any, q: Any, axis: Axis, method: str, keepdims: bool, squash_nans: bool, weights: Any = None
) -> Array:
    if method not in _METHODS:
        raise ValueError(
            "method can only be 'linear', 'lower', 'higher', 'midpoint', 'nearest' or "
            "'inverted_cdf'"
        )
    if weights is not None:
        a, weights = _weighed(a, weights, axis, method)
    else:
        (a,) = promote_dtypes_inexact(a)
    if _dtypes.issubdtype(a.dtype, np.complexfloating):
        raise ValueError(
            "quantile does not support complex input, as the operation is poorly defined."
        )
    keep_shape: list[int] = []
    if axis is None:
        if keepdims:
            keep_shape = [1] * len(shape_of(a))
        a = jnp.ravel(a)
        weights = None if weights is None else jnp.ravel(weights)
        axis = 0
    elif isinstance(axis, tuple):
        nd = len(shape_of(a))
        axis = tuple(canonicalize_axis(ax, nd) for ax in axis)
        keep_shape = [1 if d in axis else n for d, n in enumerate(shape_of(a))]
        a = _reduced_last(a, axis)
        weights = None if weights is None else _reduced_last(weights, axis)
        axis = len(shape_of(a)) - 1
    else:
        axis = canonicalize_axis(axis, len(shape_of(a)))
    q_shape = shape_of(q)
    if len(q_shape) > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {q_shape}")
    if squash_nans:
        # Every NaN made positive, so that all of them sort last.
        a = jnp.where(_lax.ne(a, a), np.nan, a)
        a, weights = _sorted(a, weights, axis)
        low_value, high_value, low_weight, high_weight = _nan_order_statistics(a, q, axis, keepdims)
    else:
        a = jnp.where(jnp.any(_lax.ne(a, a), axis=axis, keepdims=True), np.nan, a)
        a, weights = _sorted(a, weights, axis)
        low_value, high_value, low_weight, high_weight = _order_statistics(a, q, axis, keepdims)
    if method == "linear":
        result = _lax.add(
            _lax.mul(_as(low_value, q.dtype), low_weight),
            _lax.mul(_as(high_value, q.dtype), high_weight),
        )
    elif method == "lower":
        result = low_value
    elif method == "higher":
        result = high_value
    elif method == "nearest":
        near_low = _lax.le(high_weight, np.array(0.5, high_weight.dtype))
        result = _lax.select(near_low, low_value, high_value)
    elif method == "midpoint":
        result = _lax.mul(_lax.add(low_value, high_value), np.array(0.5, low_value.dtype))
    else:
        result = inverted_cdf(a, q, weights, axis, keepdims, squash_nans)
    if keepdims and keep_shape:
        if q_shape:
            keep_shape = [q_shape[0], *keep_shape]
        result = jnp.reshape(result, tuple(keep_shape))
    return _lax.convert_element_type(result, a.dtype)


def _as(x: Any, dtype: Any) -> Any:
    return x if x.dtype == dtype else _lax.convert_element_type(x, dtype)


def _checked(name: str, overwrite_input: bool, out: Any) -> None:
    if overwrite_input or out is not None:
        raise ValueError(f"jax.numpy.{name} does not support overwrite_input=True or out != None")


@partial(Jitted, static_argnames=_QUANTILE_STATICS)
def quantile(
    a: ArrayLike, q: ArrayLike, axis: Axis = None, out: None = None,
    overwrite_input: bool = False, method: str = "linear", keepdims: bool = False, *,
    weights: ArrayLike | None = None,
) -> Array:  # fmt: skip
    """The `q`-th quantiles (`q` in [0, 1], a scalar or 1-D) of `a` along `axis`, jitted as
    JAX's; `weights` (shaped as `a` or as its reduced axes) need `method="inverted_cdf"`."""
    a, q = ensure_arraylike("quantile", a, q)
    if weights is not None:
        (weights,) = ensure_arraylike("quantile", weights)
    _checked("quantile", overwrite_input, out)
    return _quantile(a, q, axis, method, keepdims, False, weights)


@partial(Jitted, static_argnames=_QUANTILE_STATICS)
def nanquantile(
    a: ArrayLike, q: ArrayLike, axis: Axis = None, out: None = None,
    overwrite_input: bool = False, method: str = "linear", keepdims: bool = False, *,
    weights: ArrayLike | None = None,
) -> Array:  # fmt: skip
    """`quantile` of the elements that are not NaN, jitted as JAX's."""
    a, q = ensure_arraylike("nanquantile", a, q)
    if weights is not None:
        (weights,) = ensure_arraylike("nanquantile", weights)
    _checked("nanquantile", overwrite_input, out)
    return _quantile(a, q, axis, method, keepdims, True, weights)


@partial(Jitted, static_argnames=(*_QUANTILE_STATICS, "out_sharding"))
def percentile(
    a: ArrayLike, q: ArrayLike, axis: Axis = None, out: None = None,
    overwrite_input: bool = False, method: str = "linear", keepdims: bool = False, *,
    weights: ArrayLike | None = None, out_sharding: Any = None,
) -> Array:  # fmt: skip
    """The `q`-th percentiles (`q` in [0, 100]) of `a` along `axis`: `quantile` of `q / 100`,
    jitted as JAX's."""
    a, q = ensure_arraylike("percentile", a, q)
    if weights is not None:
        (weights,) = ensure_arraylike("percentile", weights)
    (q,) = promote_dtypes_inexact(q)

    def of_fraction(x: Any, fraction: Any, w: Any) -> Array:
        return quantile(x, fraction, axis=axis, out=out, overwrite_input=overwrite_input,
                        method=method, keepdims=keepdims, weights=w)  # fmt: skip

    if out_sharding is None:
        return of_fraction(a, q / 100, weights)
    assert isinstance(out_sharding, (NamedSharding, PartitionSpec))  # as JAX's
    sharding = canonicalize_sharding(out_sharding, "jnp.percentile")
    return under_auto_axes(of_fraction, sharding)(a, q / 100, weights)


@partial(Jitted, static_argnames=_QUANTILE_STATICS)
def nanpercentile(
    a: ArrayLike, q: ArrayLike, axis: Axis = None, out: None = None,
    overwrite_input: bool = False, method: str = "linear", keepdims: bool = False, *,
    weights: ArrayLike | None = None,
) -> Array:  # fmt: skip
    """`percentile` of the elements that are not NaN, jitted as JAX's."""
    a, q = ensure_arraylike("nanpercentile", a, q)
    if weights is not None:
        (weights,) = ensure_arraylike("nanpercentile", weights)
    (q,) = promote_dtypes_inexact(q)
    return nanquantile(a, q / 100, axis=axis, out=out, overwrite_input=overwrite_input,
                       method=method, keepdims=keepdims, weights=weights)  # fmt: skip


@partial(Jitted, static_argnames=("axis", "overwrite_input", "keepdims"))
def median(
    a: ArrayLike, axis: Axis = None, out: None = None, overwrite_input: bool = False,
    keepdims: bool = False,
) -> Array:  # fmt: skip
    """The median along `axis` (the mean of the two middle values for even counts), jitted
    as JAX's."""
    (a,) = ensure_arraylike("median", a)
    return quantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                    keepdims=keepdims, method="midpoint")  # fmt: skip


@partial(Jitted, static_argnames=("axis", "overwrite_input", "keepdims"))
def nanmedian(
    a: ArrayLike, axis: Axis = None, out: None = None, overwrite_input: bool = False,
    keepdims: bool = False,
) -> Array:  # fmt: skip
    """The median of the elements that are not NaN, jitted as JAX's."""
    (a,) = ensure_arraylike("nanmedian", a)
    return nanquantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                       keepdims=keepdims, method="midpoint")  # fmt: skip


__all__ = [
    "median",
    "nanmedian",
    "nanpercentile",
    "nanquantile",
    "percentile",
    "quantile",
]
