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


def _sort_keys(x: Any) -> list[Any]:
    """`x` as the keys sorting compares, most significant first. (IEEE comparison already
    makes `-0.0` equal to `0.0`; `_lt` and `_eq` place the NaNs.)"""
    if _dtypes.issubdtype(x.dtype, np.complexfloating):
        return [_lax.real(x), _lax.imag(x)]
    return [x]


def _lt(x: Any, y: Any) -> Any:
    if _dtypes.issubdtype(x.dtype, np.floating):
        nan_x, nan_y = _lax.ne(x, x), _lax.ne(y, y)
        return _lax.bitwise_or(_lax.lt(x, y), _lax.bitwise_and(_lax.bitwise_not(nan_x), nan_y))
    return _lax.lt(x, y)


def _eq(x: Any, y: Any) -> Any:
    if _dtypes.issubdtype(x.dtype, np.floating):
        both_nan = _lax.bitwise_and(_lax.ne(x, x), _lax.ne(y, y))
        return _lax.bitwise_or(_lax.eq(x, y), both_nan)
    return _lax.eq(x, y)


def _compare(x: Any, y: Any, or_equal: bool) -> Any:
    """`x < y` (or `x <= y`) in sorting's total order, lexicographic over the keys."""
    xs, ys = _sort_keys(x), _sort_keys(y)
    result = None
    for xk, yk in zip(xs[::-1], ys[::-1], strict=True):
        if result is None:
            lt = _lt(xk, yk)
            result = _lax.bitwise_or(lt, _eq(xk, yk)) if or_equal else lt
        else:
            result = _lax.bitwise_or(_lt(xk, yk), _lax.bitwise_and(_eq(xk, yk), result))
    return result


def _search_one(sorted_arr: Any, query: Any, side: str, dtype: Any, unrolled: bool) -> Any:
    n = shape_of(sorted_arr)[0]
    unsigned = np.uint64 if np.dtype(dtype).itemsize == 8 else np.uint32
    or_equal = side == "left"

    def body(state: Any, _: Any) -> Any:
        low, high = state
        mid = _lax.add(low, _lax.div(_lax.sub(high, low), unsigned(2)))
        go_left = _compare(query, _lax.dynamic_index_in_dim(sorted_arr, mid, 0, False), or_equal)
        return (_lax.select(go_left, low, mid), _lax.select(go_left, mid, high)), ()

    levels = math.ceil(math.log2(n + 1))
    (_, high), _ = scan(body, (unsigned(0), unsigned(n)), (), length=levels,
                        unroll=levels if unrolled else 1)  # fmt: skip
    return _lax.convert_element_type(high, dtype)


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
    query_shape = shape_of(v)
    if n == 0:
        return _lax.full(query_shape, 0, dtype)
    flat = _lax.reshape(v, (math.prod(query_shape),))
    found = vmap(lambda q: _search_one(a, q, side, dtype, method == "scan_unrolled"))(flat)
    return _lax.reshape(found, query_shape)


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
