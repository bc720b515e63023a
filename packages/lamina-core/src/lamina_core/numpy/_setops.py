"""Data-dependent selections of `jax.numpy`: `nonzero`, `flatnonzero`, `argwhere`, `unique`
(and the array API's `unique_values`, `unique_counts`, `unique_inverse`, `unique_all`), and
`isin`. Their output sizes depend on values, so, as in JAX, they need concrete inputs unless a
static `size=` is given (then results are padded with `fill_value`)."""

from __future__ import annotations

import math
import operator
from functools import partial
from typing import Any, Final, NamedTuple

import numpy as np

import lamina_core.numpy as jnp
from lamina_core import lax as _lax
from lamina_core.numpy._index_update import at
from lamina_core.numpy._promote import promote_dtypes
from lamina_core.numpy._reductions import canonicalize_axis, ensure_arraylike
from lamina_core.numpy._shape import _reshape
from lamina_core.numpy._util import Array, ArrayLike, lax_const, shape_of
from lamina_core.trace import ConcretizationTypeError, Tracer, concrete_or_error
from lamina_core.transforms import Jitted

_NONZERO_SIZE: Final = (
    "The size argument of jnp.nonzero must be statically specified to use jnp.nonzero within "
    "JAX transformations."
)
_UNIQUE_SIZE_HINT: Final = (
    "To make jnp.unique() compatible with JIT and other transforms, you can specify a concrete "
    "value for the size argument, which will determine the output size."
)


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
    mask = arr if arr.dtype == bool else jnp.not_equal(arr, 0)
    if size is None:
        n = operator.index(concrete_or_error(jnp.sum(mask), _NONZERO_SIZE))
    else:
        n = operator.index(concrete_or_error(size, _NONZERO_SIZE))
    if math.prod(shape) == 0 or n == 0:
        return tuple(jnp.zeros(n, int) for _ in shape)
    # The running count of nonzeros, binned, counts the zeros before each nonzero; their
    # running sum is then each nonzero's flat index.
    flat_indices = jnp.cumsum(jnp.bincount(jnp.cumsum(mask), length=n))
    strides = (np.cumprod(shape[::-1])[::-1] // shape).astype(flat_indices.dtype)
    out = tuple(
        jnp.remainder(jnp.floor_divide(flat_indices, stride), dim)
        for stride, dim in zip(strides, shape, strict=True)
    )
    if fill_value is not None:
        fills = fill_value if isinstance(fill_value, tuple) else (fill_value,) * len(shape)
        if any(np.shape(f) != () for f in fills):
            raise ValueError(
                f"fill_value must be a scalar or a tuple of length {len(shape)}; got {fill_value}"
            )
        fill_mask = jnp.greater_equal(jnp.arange(n), jnp.sum(mask))
        out = tuple(jnp.where(fill_mask, f, o) for f, o in zip(fills, out, strict=True))
    return out


def flatnonzero(
    a: ArrayLike, *, size: int | None = None, fill_value: ArrayLike | None = None
) -> Array:
    """The indices of the nonzero elements of the flattened `a`."""
    return nonzero(jnp.ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(
    a: ArrayLike, *, size: int | None = None, fill_value: ArrayLike | None = None
) -> Array:
    """The indices of the nonzero elements, one row per element."""
    (arr,) = ensure_arraylike("argwhere", a)
    found = nonzero(jnp.atleast_1d(arr), size=size, fill_value=fill_value)
    result = jnp.transpose(jnp.vstack(found))
    rows = shape_of(result)[0]
    if not shape_of(arr):
        return _reshape(result[:0], rows, 0)
    return _reshape(result, rows, len(shape_of(arr)))


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
    """The sorted unique elements of `ar` (flattened, or its slices along `axis`), and
    optionally where each first occurs, how to rebuild `ar` from them, and how often each
    occurs. With `size`, results are padded (with `fill_value`, default the smallest element)
    or truncated. `sorted` is unused, as in JAX: results are always sorted."""
    (arr,) = ensure_arraylike("unique", ar)
    if size is None:
        arr = concrete_or_error(
            arr, "The error arose for the first argument of jnp.unique(). " + _UNIQUE_SIZE_HINT
        )
    else:
        size = operator.index(
            concrete_or_error(
                size, "The error arose for the size argument of jnp.unique(). " + _UNIQUE_SIZE_HINT
            )
        )
    arr_shape = shape_of(arr)
    if axis is None:
        axis_int = 0
        arr = jnp.ravel(arr)
    else:
        axis_int = canonicalize_axis(axis, len(arr_shape))
    result = _unique(
        arr, axis_int, return_index, return_inverse, return_counts, equal_nan, size, fill_value
    )
    if return_inverse and axis is None:
        i = 2 if return_index else 1
        result = (*result[:i], _reshape(result[i], arr_shape), *result[i + 1 :])
    return result


@partial(Jitted, static_argnames=("axis", "equal_nan"))
def _unique_sorted_mask(ar: Array, axis: int, equal_nan: bool) -> tuple[Array, Array, Array]:
    """The slices of `ar` along `axis` sorted (moved to the front), a mask of the first of
    each run of equal ones, and the sorting permutation."""
    aux = jnp.moveaxis(ar, axis, 0)
    if jnp.issubdtype(aux.dtype, np.complexfloating):
        # NaNs only in the imaginary part would sort apart from the other NaNs.
        aux = jnp.where(jnp.isnan(aux), lax_const(aux, np.nan), aux)
    size, *rest = shape_of(aux)
    if math.prod(rest) == 0:
        size = 1
        perm = jnp.zeros(1, dtype=int)
    else:
        perm = jnp.lexsort(jnp.reshape(aux, (size, math.prod(rest))).T[::-1])
    aux = aux[perm]
    if aux.size:
        if jnp.issubdtype(aux.dtype, np.inexact) and equal_nan:

            def neq(x: Array, y: Array) -> Array:
                return _lax.ne(x, y) & ~(jnp.isnan(x) & jnp.isnan(y))

        else:
            neq = _lax.ne
        first = jnp.ones(size, dtype=bool)  # staged before the comparisons, as in JAX
        mask = at(first)[1:].set(jnp.any(neq(aux[1:], aux[:-1]), tuple(range(1, aux.ndim))))
    else:
        mask = jnp.zeros(size, dtype=bool)
    return aux, mask, perm


def _unique(
    ar: Array, axis: int, return_index: bool, return_inverse: bool, return_counts: bool,
    equal_nan: bool, size: int | None, fill_value: ArrayLike | None,
) -> Any:  # fmt: skip
    """`unique` of `ar`'s slices along `axis` (the results' arrays, or the one array)."""
    shape = shape_of(ar)
    if shape[axis] == 0 and size and fill_value is None:
        raise ValueError(
            "jnp.unique: for zero-sized input with nonzero size argument, fill_value must be "
            "specified"
        )
    aux, mask, perm = _unique_sorted_mask(ar, axis, equal_nan)
    has_elements = math.prod(shape_of(aux)) != 0
    if size is None:
        ind = concrete_or_error(mask, "The error arose in jnp.unique(). " + _UNIQUE_SIZE_HINT)
    else:
        ind = nonzero(mask, size=size)[0]
    result = aux[ind] if has_elements else aux
    if size is not None and fill_value is not None:
        fill = jnp.astype(_lax.asarray(fill_value), result.dtype)
        if shape_of(result)[0]:
            valid = _lax.expand_dims(
                jnp.less(jnp.arange(size), jnp.sum(mask)), tuple(range(1, result.ndim))
            )
            result = jnp.where(valid, result, fill)
        else:
            result = jnp.full_like(result, fill, shape=(size, *shape_of(result)[1:]))
    ret: list[Array] = [jnp.moveaxis(result, 0, axis)]
    if return_index:
        ret.append(perm[ind] if has_elements else perm)
    if return_inverse:
        if has_elements:
            running = jnp.subtract(jnp.cumsum(mask), 1)
            inverse = at(jnp.zeros(shape_of(mask), dtype=int))[perm].set(running)
        else:
            inverse = jnp.zeros(shape[axis], dtype=int)
        ret.append(inverse)
    if return_counts:
        ret.append(_unique_counts(mask, size, has_elements, shape[axis]))
    return ret[0] if len(ret) == 1 else tuple(ret)


def _unique_counts(mask: Array, size: int | None, has_elements: bool, length: int) -> Array:
    """How often each unique slice occurs: the gaps between the starts of the runs."""
    if has_elements:
        n = shape_of(mask)[0]
        if size is None:
            starts = jnp.append(nonzero(mask)[0], n)
        else:
            starts = nonzero(mask, size=size + 1)[0]
            # Two slices, as JAX stages them; starts past the last run read 0.
            starts = at(starts)[1:].set(jnp.where(starts[1:], starts[1:], n))
        return jnp.diff(starts)
    if length:
        return jnp.full((1,), length, dtype=int)
    return jnp.empty(0, dtype=int)


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
