"""Data-dependent selections of `jax.numpy`: `nonzero`, `flatnonzero`, `argwhere`, `unique`
(and the array API's `unique_values`, `unique_counts`, `unique_inverse`, `unique_all`), and
`isin`. Their output sizes depend on values, so, as in JAX, they need concrete inputs unless a
static `size=` is given (then results are padded with `fill_value`)."""

from __future__ import annotations

import operator
from typing import Any, NamedTuple

import numpy as np

import lamina_core.numpy as jnp
from lamina_core.numpy._index_update import at
from lamina_core.numpy._promote import promote_dtypes
from lamina_core.numpy._reductions import ensure_arraylike
from lamina_core.numpy._util import Array, ArrayLike, shape_of
from lamina_core.trace import ConcretizationTypeError, Tracer


def _static_count(mask: Any, what: str) -> int:
    if isinstance(mask, Tracer):
        raise ConcretizationTypeError(
            f"Abstract tracer value encountered where concrete value is expected: "
            f"{mask._error_repr()}\nThe size argument of jnp.{what} must be statically "
            f"specified to use jnp.{what} within JAX transformations."
        )
    return int(np.count_nonzero(np.asarray(mask)))


def nonzero(
    a: ArrayLike,
    *,
    size: int | None = None,
    fill_value: ArrayLike | tuple[ArrayLike, ...] | None = None,
) -> tuple[Array, ...]:
    """The indices of the nonzero elements of `a`, one array per axis, in row-major order.

    Without `size` the count must be concrete; with it, results have `size` entries, padded
    with `fill_value` (default 0) or truncated."""
    (arr,) = ensure_arraylike("nonzero", a)
    shape = shape_of(arr)
    if not shape:
        raise ValueError(
            "Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d(scalar).nonzero() "
            "instead."
        )
    mask = jnp.not_equal(jnp.ravel(arr), jnp.zeros((), arr.dtype))
    count = jnp.sum(mask, dtype=np.int32)
    n = _static_count(mask, "nonzero") if size is None else operator.index(size)
    total = int(np.prod(shape))
    if total == 0 or n == 0:
        return tuple(jnp.zeros((n,), np.int32) for _ in shape)
    # A stable sort of "is zero" flags puts the nonzero positions first, in order.
    order = jnp.argsort(jnp.logical_not(mask).astype(np.int8), stable=True).astype(np.int32)
    flat = order[:n] if n <= total else jnp.concatenate([order, jnp.zeros((n - total,), np.int32)])
    valid = jnp.less(jnp.arange(n, dtype=np.int32), count)
    flat = jnp.where(valid, flat, jnp.zeros((), np.int32))
    out = []
    for axis, stride in enumerate(np.cumprod((1, *shape[::-1][:-1]))[::-1]):
        index = jnp.remainder(jnp.floor_divide(flat, int(stride)), shape[axis]).astype(np.int32)
        out.append(index)
    if fill_value is not None:
        fills = fill_value if isinstance(fill_value, tuple) else (fill_value,) * len(shape)
        if len(fills) != len(shape):
            raise ValueError(
                f"fill_value must be a scalar or a tuple of length {len(shape)}; got {fill_value}"
            )
        out = [
            jnp.where(valid, o, jnp.asarray(f, np.int32)) for o, f in zip(out, fills, strict=True)
        ]
    return tuple(out)


def flatnonzero(
    a: ArrayLike, *, size: int | None = None, fill_value: ArrayLike | None = None
) -> Array:
    """The indices of the nonzero elements of the flattened `a`."""
    return nonzero(jnp.ravel(jnp.asarray(a)), size=size, fill_value=fill_value)[0]


def argwhere(
    a: ArrayLike, *, size: int | None = None, fill_value: ArrayLike | None = None
) -> Array:
    """The indices of the nonzero elements, one row per element."""
    (arr,) = ensure_arraylike("argwhere", a)
    if not shape_of(arr):
        arr = jnp.reshape(arr, (1,))
        result = nonzero(arr, size=size, fill_value=fill_value)
        return jnp.zeros((shape_of(result[0])[0], 0), np.int32)
    return jnp.stack(nonzero(arr, size=size, fill_value=fill_value), axis=1)


class UniqueAllResult(NamedTuple):
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    values: Array
    inverse_indices: Array


def unique(
    ar: ArrayLike, return_index: bool = False, return_inverse: bool = False,
    return_counts: bool = False, axis: int | None = None, *, equal_nan: bool = True,
    size: int | None = None, fill_value: ArrayLike | None = None, sorted: bool = True,
) -> Any:  # fmt: skip
    """The sorted unique elements of the flattened `ar`, and optionally where each first
    occurs, how to rebuild `ar` from them, and how often each occurs. With `size`, results
    are padded (with `fill_value`, default the smallest element) or truncated."""
    if axis is not None:
        raise NotImplementedError("jnp.unique along an axis is not supported yet; flatten")
    if not sorted:
        raise NotImplementedError("jnp.unique(sorted=False) is not supported")
    (arr,) = ensure_arraylike("unique", ar)
    flat = jnp.ravel(arr)
    total = shape_of(flat)[0]
    perm = jnp.argsort(flat, stable=True).astype(np.int32)
    aux = flat[perm] if total else flat
    if total:
        differs = jnp.not_equal(aux[1:], aux[:-1])
        if equal_nan and jnp.issubdtype(aux.dtype, np.inexact):
            differs = jnp.logical_and(
                differs, jnp.logical_not(jnp.logical_and(jnp.isnan(aux[1:]), jnp.isnan(aux[:-1])))
            )
        mask = jnp.concatenate([jnp.ones((1,), bool), differs])
    else:
        mask = jnp.zeros((0,), bool)
    n = _static_count(mask, "unique") if size is None else operator.index(size)
    (ind,) = nonzero(mask, size=n) if total else (jnp.zeros((n,), np.int32),)
    values = aux[ind] if total else jnp.zeros((n,), aux.dtype)
    count = jnp.sum(mask, dtype=np.int32)
    valid = jnp.less(jnp.arange(n, dtype=np.int32), count)
    if size is not None and fill_value is not None:
        values = jnp.where(valid, values, jnp.asarray(fill_value, aux.dtype))
    results: list[Any] = [values]
    if return_index:
        results.append(perm[ind] if total else jnp.zeros((n,), np.int32))
    if return_inverse:
        inverse = jnp.zeros((total,), np.int32)
        if total:
            inverse = at(inverse)[perm].set(jnp.cumsum(mask, dtype=np.int32) - 1)
        results.append(jnp.reshape(inverse, shape_of(arr)) if shape_of(arr) else inverse)
    if return_counts:
        if total:
            (starts,) = nonzero(mask, size=n + 1)
            ends = jnp.where(jnp.less(jnp.arange(n + 1), count), starts, total)
            counts = jnp.diff(ends)
            counts = jnp.where(valid, counts, jnp.zeros((), counts.dtype))
        else:
            counts = jnp.zeros((n,), np.int32)
        results.append(counts)
    return results[0] if len(results) == 1 else tuple(results)


def unique_values(
    x: ArrayLike, /, *, size: int | None = None, fill_value: ArrayLike | None = None
) -> Array:
    """The array API's `unique_values` (NaNs are distinct, as the array API says)."""
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


def unique_counts(
    x: ArrayLike, /, *, size: int | None = None, fill_value: ArrayLike | None = None
) -> UniqueCountsResult:
    """The array API's `unique_counts`: values and counts."""
    return UniqueCountsResult(
        *unique(x, return_counts=True, equal_nan=False, size=size, fill_value=fill_value)
    )


def unique_inverse(
    x: ArrayLike, /, *, size: int | None = None, fill_value: ArrayLike | None = None
) -> UniqueInverseResult:
    """The array API's `unique_inverse`: values and inverse indices."""
    return UniqueInverseResult(
        *unique(x, return_inverse=True, equal_nan=False, size=size, fill_value=fill_value)
    )


def unique_all(
    x: ArrayLike, /, *, size: int | None = None, fill_value: ArrayLike | None = None
) -> UniqueAllResult:
    """The array API's `unique_all`: values, first indices, inverse indices and counts."""
    return UniqueAllResult(
        *unique(x, return_index=True, return_inverse=True, return_counts=True,
                equal_nan=False, size=size, fill_value=fill_value)
    )  # fmt: skip


def isin(
    element: ArrayLike, test_elements: ArrayLike, assume_unique: bool = False,
    invert: bool = False, *, method: str = "auto",
) -> Array:  # fmt: skip
    """Elementwise: whether each element of `element` occurs in `test_elements`."""
    if method not in ("auto", "compare_all", "binary_search", "sort"):
        raise ValueError(f"method={method!r} is not implemented; options are 'auto', "
                         "'compare_all', 'binary_search', 'sort'")  # fmt: skip
    a, b = promote_dtypes(*ensure_arraylike("isin", element, test_elements))
    flat_a, flat_b = jnp.ravel(a), jnp.ravel(b)
    if not shape_of(flat_a)[0] or not shape_of(flat_b)[0]:
        found = jnp.full(shape_of(flat_a), invert, bool)
    elif invert:
        found = jnp.all(jnp.not_equal(flat_a[:, None], flat_b[None, :]), axis=-1)
    else:
        found = jnp.any(jnp.equal(flat_a[:, None], flat_b[None, :]), axis=-1)
    return jnp.reshape(found, shape_of(a))


__all__ = [
    "argwhere",
    "flatnonzero",
    "isin",
    "nonzero",
    "unique",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
]


def _selected(values: Any, keep: Any, size: int | None, fill_value: ArrayLike | None) -> Array:
    """`values[keep]`: concrete, or padded to `size` with `fill_value` (default the first
    selected value, as JAX's)."""
    n = _static_count(keep, "setops") if size is None else operator.index(size)
    (where,) = nonzero(keep, size=n)
    out = values[where] if shape_of(values)[0] else jnp.zeros((n,), values.dtype)
    if size is not None:
        valid = jnp.less(jnp.arange(n), jnp.sum(keep))
        fill = (
            out[0]
            if fill_value is None and n
            else jnp.asarray(0 if fill_value is None else fill_value, values.dtype)
        )
        out = jnp.where(valid, out, fill)
    return out


def union1d(
    ar1: ArrayLike, ar2: ArrayLike, *, size: int | None = None, fill_value: ArrayLike | None = None
) -> Array:
    """The sorted unique values in either array."""
    a, b = promote_dtypes(*ensure_arraylike("union1d", ar1, ar2))
    both = jnp.concatenate([jnp.ravel(a), jnp.ravel(b)])
    return unique(both, size=size, fill_value=fill_value)


def setdiff1d(
    ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False, *, size: int | None = None,
    fill_value: ArrayLike | None = None,
) -> Array:  # fmt: skip
    """The sorted unique values of `ar1` that are not in `ar2`."""
    a, b = promote_dtypes(*ensure_arraylike("setdiff1d", ar1, ar2))
    a = jnp.ravel(a) if assume_unique else unique(jnp.ravel(a))
    return _selected(a, isin(a, b, invert=True), size, fill_value)


def intersect1d(
    ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False, return_indices: bool = False,
    *, size: int | None = None, fill_value: ArrayLike | None = None,
) -> Any:  # fmt: skip
    """The sorted unique values in both arrays (and, with `return_indices`, where each first
    occurs in each array)."""
    a, b = promote_dtypes(*ensure_arraylike("intersect1d", ar1, ar2))
    a, b = jnp.ravel(a), jnp.ravel(b)
    if assume_unique:
        ia, ib = jnp.arange(shape_of(a)[0]), jnp.arange(shape_of(b)[0])
    else:
        a, ia = unique(a, return_index=True)
        b, ib = unique(b, return_index=True)
    both = jnp.concatenate([a, b])
    order = jnp.argsort(both, stable=True)
    ordered = both[order]
    same = jnp.equal(ordered[1:], ordered[:-1])
    values = _selected(ordered[:-1], same, size, fill_value)
    if not return_indices:
        return values
    n_a = shape_of(a)[0]
    first = _selected(order[:-1], same, size, 0)
    second = jnp.subtract(_selected(order[1:], same, size, n_a), n_a)
    return values, ia[first], ib[second]


def setxor1d(
    ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False, *, size: int | None = None,
    fill_value: ArrayLike | None = None,
) -> Array:  # fmt: skip
    """The sorted unique values in exactly one of the arrays."""
    a, b = promote_dtypes(*ensure_arraylike("setxor1d", ar1, ar2))
    a, b = jnp.ravel(a), jnp.ravel(b)
    if not assume_unique:
        a, b = unique(a), unique(b)
    ordered = jnp.sort(jnp.concatenate([a, b]))
    if not shape_of(ordered)[0]:
        return ordered
    new = jnp.concatenate([jnp.ones((1,), bool), jnp.not_equal(ordered[1:], ordered[:-1]),
                           jnp.ones((1,), bool)])  # fmt: skip
    return _selected(ordered, jnp.logical_and(new[1:], new[:-1]), size, fill_value)


__all__ += ["intersect1d", "setdiff1d", "setxor1d", "union1d"]
