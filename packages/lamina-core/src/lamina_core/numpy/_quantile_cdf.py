"""The `inverted_cdf` quantile method, the one JAX's `quantile` weighs values for.

Each quantile is the first sorted value whose running sum of weights reaches `q` times the
total weight (weights 1 when none are given). A negative or NaN weight, or (outside the NaN
variants) a NaN value, makes the whole slice's quantile NaN. It reads the values and weights
already sorted together along `axis`, and binds JAX's primitives in JAX's order, so a
weighted quantile prints as JAX's.
"""

from __future__ import annotations

from typing import Any

import lamina_core.numpy as jnp
from lamina_core import lax as _lax
from lamina_core.ir import dtypes as _dtypes
from lamina_core.numpy._promote import const
from lamina_core.numpy._util import Array, shape_of


def _isnan(x: Any) -> Any:
    return _lax.ne(x, x)


def _take_per_quantile(a: Any, idx: Any, axis: int, q_nd: int) -> Any:
    """`a`'s values at `idx` along `axis`, `idx` holding one leading axis per quantile."""
    if q_nd == 0:
        taken = jnp.take_along_axis(a, _lax.expand_dims(idx, (axis,)), axis=axis)
        return _lax.squeeze(taken, (axis,))
    ndim = len(shape_of(idx))
    perm = [*range(q_nd, q_nd + axis), *range(q_nd), *range(q_nd + axis, ndim)]
    taken = jnp.take_along_axis(a, _lax.transpose(idx, perm), axis=axis)
    return _lax.transpose(taken, [perm.index(i) for i in range(len(perm))])


def inverted_cdf(
    a: Any, q: Any, weights: Any, axis: int, keepdims: bool, squash_nans: bool
) -> Array:
    """The `inverted_cdf` quantiles `q` (a scalar or 1-D) of `a` along `axis`, `a` and
    `weights` (None: all ones) sorted together along it."""
    q_nd = len(shape_of(q))
    size = shape_of(a)[axis]
    if weights is None:
        weights = _lax.full_like(a, 1.0)
    zeros = _lax.full_like(weights, 0)
    bad_weights = _lax.bitwise_or(_lax.lt(weights, zeros), _isnan(weights))
    nan_data = _isnan(a)
    clean = _lax.select(_lax.bitwise_or(bad_weights, nan_data), zeros, weights)
    cumulative = jnp.cumsum(clean, axis=axis)
    total = _lax.index_in_dim(cumulative, -1, axis=axis, keepdims=keepdims)
    leading = tuple(range(q_nd))
    total_per_q = _lax.expand_dims(total, leading)
    q_per_slice = _lax.reshape(q, (*shape_of(q), *(1,) * len(shape_of(total))))
    target = _lax.mul(q_per_slice, total_per_q)
    if not keepdims:
        target = _lax.expand_dims(target, (axis + q_nd,))
    below = _lax.lt(_lax.expand_dims(cumulative, leading), target)
    int_dtype = _dtypes.canonicalize_dtype(int)
    below_count = _lax.convert_element_type(below, int_dtype)
    idx = jnp.sum(below_count, axis=axis + q_nd, keepdims=keepdims)
    if squash_nans:
        valid = jnp.sum(_lax.bitwise_not(nan_data), axis=axis, dtype=q.dtype, keepdims=keepdims)
    else:
        valid = _lax.full_like(total, size, dtype=q.dtype)
    last = _lax.convert_element_type(_lax.sub(valid, const(valid, 1)), int_dtype)
    last = _lax.convert_element_type(_lax.expand_dims(last, leading), idx.dtype)
    idx = _lax.max(const(idx, 0), _lax.min(idx, last))
    if keepdims:
        idx = _lax.squeeze(idx, (q_nd + axis,))
    result = _take_per_quantile(a, idx, axis, q_nd)
    if keepdims:
        result = _lax.expand_dims(result, (q_nd + axis,))
    all_nan = _lax.eq(valid, _lax.full_like(valid, 0))
    any_bad_weight = jnp.any(bad_weights, axis=axis, keepdims=keepdims)
    if squash_nans:
        force_nan = _lax.bitwise_or(any_bad_weight, all_nan)
    else:
        force_nan = _lax.bitwise_or(any_bad_weight, jnp.any(nan_data, axis=axis, keepdims=keepdims))
    force_nan = _lax.expand_dims(force_nan, leading)
    return jnp.where(force_nan, _lax.full_like(result, float("nan")), result)
