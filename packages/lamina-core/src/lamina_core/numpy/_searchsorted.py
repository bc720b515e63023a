"""`searchsorted`: where values would be inserted into a sorted array, as `jax.numpy`'s.

JAX searches by bisection in a `scan` of `ceil(log2(n + 1))` steps per query (its default
method); every method gives the same indices. Comparisons use the total order of sorting:
NaNs after every number and equal to each other, `-0.0` equal to `0.0`, complex numbers by
real then imaginary part.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import numpy as np

from lamina_core import lax as _lax
from lamina_core.ir import dtypes as _dtypes
from lamina_core.lax import scan
from lamina_core.numpy._promote import promote_dtypes
from lamina_core.numpy._reductions import ensure_arraylike
from lamina_core.numpy._ufuncs_composite import where
from lamina_core.numpy._util import Array, ArrayLike, shape_of
from lamina_core.transforms import Jitted, vmap

_METHODS = ("compare_all", "scan", "scan_unrolled", "sort")


def _canonical_for_sort(x: Any) -> Any:
    """`x` with `-0.0` made `0.0` and every NaN the same NaN, as sorting compares them."""
    zeroed = _lax.select(_lax.eq(x, np.zeros((), x.dtype)), _lax.full_like(x, 0), x)
    return _lax.select(_lax.ne(x, x), _lax.full_like(zeroed, np.nan), zeroed)


def _sort_keys(x: Any) -> list[Any]:
    """`x` as the keys sorting compares, most significant first."""
    if _dtypes.issubdtype(x.dtype, np.complexfloating):
        return [_canonical_for_sort(_lax.real(x)), _canonical_for_sort(_lax.imag(x))]
    if _dtypes.issubdtype(x.dtype, np.floating):
        return [_canonical_for_sort(x)]
    return [x]


def _compare(x: Any, y: Any, or_equal: bool) -> Any:
    """`x < y` (or `x <= y`) in sorting's total order (NaNs last), lexicographic over the
    keys: JAX's sort comparators, on its total-order comparison primitives."""
    result = None
    for xk, yk in zip(_sort_keys(x)[::-1], _sort_keys(y)[::-1], strict=True):
        if result is None:
            result = (_lax.le_to_p if or_equal else _lax.lt_to_p).bind(xk, yk)
        else:
            strictly = _lax.lt_to_p.bind(xk, yk)
            tied = _lax.eq_to_p.bind(xk, yk)
            result = _lax.bitwise_or(strictly, _lax.bitwise_and(tied, result))
    return result


@partial(Jitted, static_argnames=("side", "dtype", "unrolled"))
def _searchsorted_scan_impl(
    sorted_arr: Any, query: Any, side: str, dtype: Any, unrolled: bool
) -> Any:
    """Bisection in a `scan` of `ceil(log2(n + 1))` steps, one query at a time (vmapped)."""
    (n,) = shape_of(sorted_arr)
    if n == 0:
        return _lax.full(shape_of(query), 0, dtype)
    if len(shape_of(query)) > 0:
        one = partial(_searchsorted_scan_impl, side=side, dtype=dtype, unrolled=unrolled)
        return vmap(one, in_axes=(None, 0))(sorted_arr, query)
    unsigned = np.uint64 if np.dtype(dtype).itemsize == 8 else np.uint32
    or_equal = side == "left"

    def body(state: Any, _: Any) -> Any:
        low, high = state
        mid = low + (high - low) // 2  # this form cannot overflow
        go_left = _compare(query, sorted_arr[mid], or_equal)
        return (_lax.select(go_left, low, mid), _lax.select(go_left, mid, high)), ()

    levels = math.ceil(math.log2(n + 1))
    (_, high), _ = scan(body, (unsigned(0), unsigned(n)), (), length=levels,
                        unroll=levels if unrolled else 1)  # fmt: skip
    return _lax.convert_element_type(high, dtype)


@partial(Jitted, static_argnames=("side", "dtype"))
def _searchsorted_sort_impl(sorted_arr: Any, query: Any, side: str, dtype: Any) -> Any:
    """By sorting the queries together with the sorted array: a query's rank among both,
    less its rank among the queries."""
    (n,) = shape_of(sorted_arr)
    count = math.prod(shape_of(query))
    working = np.int32 if n + count <= np.iinfo(np.int32).max else np.int64

    def rank(x: Any) -> Any:
        idx = _lax.iota(working, shape_of(x)[0])
        return _lax.full_like(idx, 0).at[_lax.sort_key_val(x, idx)[1]].set(idx)

    def flat() -> Any:  # flattened afresh at each use, as JAX's `query.ravel()`
        return _lax.reshape(query, (count,))

    if side == "left":
        index = rank(_lax.concatenate([flat(), sorted_arr], 0))[:count]
    else:
        index = rank(_lax.concatenate([sorted_arr, flat()], 0))[n:]
    found = _lax.reshape(_lax.sub(index, rank(flat())), shape_of(query))
    return _lax.convert_element_type(found, dtype)


@partial(Jitted, static_argnames=("side", "dtype"))
def _searchsorted_compare_all_impl(sorted_arr: Any, query: Any, side: str, dtype: Any) -> Any:
    """By comparing every query with every element of the sorted array."""
    or_equal = side != "left"
    comparisons = vmap(lambda a, q: _compare(a, q, or_equal), in_axes=(0, None))(sorted_arr, query)
    return comparisons.sum(dtype=dtype, axis=0)


@partial(Jitted, static_argnames=("side", "method"))
def searchsorted(
    a: ArrayLike,
    v: ArrayLike,
    side: str = "left",
    sorter: ArrayLike | None = None,
    *,
    method: str = "scan",
) -> Array:
    """Indices where `v`'s elements would be inserted into the sorted 1-D `a` to keep it
    sorted (`side="left"`: before equal elements; `"right"`: after), as
    `jax.numpy.searchsorted`. `sorter` sorts `a` first; `method` is accepted as JAX's."""
    if sorter is None:
        a, v = ensure_arraylike("searchsorted", a, v)
    else:
        a, v, sorter = ensure_arraylike("searchsorted", a, v, sorter)
    if len(shape_of(a)) != 1:
        raise ValueError("a should be 1-dimensional")
    if side not in ("left", "right"):
        raise ValueError(f"invalid argument side={side!r}, expected 'left' or 'right'")
    if method not in _METHODS:
        raise ValueError(f"invalid argument {method=}, expected one of {list(_METHODS)}")
    a, v = promote_dtypes(a, v)
    if sorter is not None:
        a = a[sorter]
    n = shape_of(a)[0]
    dtype = np.dtype(np.int32) if n <= np.iinfo(np.int32).max else np.dtype(np.int64)
    if method in ("scan", "scan_unrolled"):
        return _searchsorted_scan_impl(a, v, side, dtype, method == "scan_unrolled")
    if method == "sort":
        return _searchsorted_sort_impl(a, v, side, dtype)
    return _searchsorted_compare_all_impl(a, v, side, dtype)


@partial(Jitted, static_argnames=("right", "method"))
def digitize(
    x: ArrayLike, bins: ArrayLike, right: bool = False, *, method: str | None = None
) -> Array:
    """The index of the bin each element of `x` falls in (`bins` increasing or decreasing;
    `right` puts a value equal to an edge in the bin to its left), as `jnp.digitize`."""
    x, bins = ensure_arraylike("digitize", x, bins)
    if len(shape_of(bins)) != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got {bins.shape}")
    n = shape_of(bins)[0]
    if n == 0:
        return _lax.full(shape_of(x), 0, np.int32)
    side = "left" if right else "right"
    how = "scan" if method is None else method
    # JAX's order: the direction test, then both searches, then a jitted `where`.
    increasing = _lax.ge(bins[-1], bins[0])
    rising = searchsorted(bins, x, side=side, method=how)
    falling = _lax.sub(np.int32(n), searchsorted(bins[::-1], x, side=side, method=how))
    return where(increasing, rising, falling)


__all__ = ["digitize", "searchsorted"]
