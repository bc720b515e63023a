"""Parts of matrices: `tri`, `tril`, `triu`, `diag`, `diagonal`, `trace`, and differences
along an axis (`diff`, `ediff1d`), with `jax.numpy`'s semantics and errors."""

from __future__ import annotations

import operator
from functools import partial
from typing import Any

import numpy as np

import lamina_core.numpy as jnp
from lamina_core import lax as _lax
from lamina_core.numpy._reductions import canonicalize_axis, ensure_arraylike
from lamina_core.numpy._util import Array, ArrayLike, DTypeLike, shape_of
from lamina_core.transforms import Jitted


def _tri_mask(n: int, m: int, k: int) -> Array:
    rows = _lax.add(_lax.broadcasted_iota(np.int32, (n, m), 0), np.int32(k))
    cols = _lax.broadcasted_iota(np.int32, (n, m), 1)
    return _lax.ge(rows, cols)


def tri(N: int, M: int | None = None, k: int = 0, dtype: DTypeLike | None = None) -> Array:
    """Ones on and below the `k`-th diagonal of an `N x M` matrix, zeros above."""
    n = operator.index(N)
    m = n if M is None else operator.index(M)
    mask = _tri_mask(n, m, operator.index(k))
    return mask.astype(jnp.float32 if dtype is None else dtype)


def _at_least_2d(name: str, m: Any) -> Any:
    (m,) = ensure_arraylike(name, m)
    if len(shape_of(m)) < 2:
        raise ValueError(f"Argument to jax.numpy.{name} must be at least 2D")
    return m


def _tri_which(m: Any, k: int) -> Array:
    """The mask of `tri(N, M, k)` for `m`'s last two axes, broadcast over its leading ones."""
    shape = shape_of(m)
    n, cols = shape[-2:]
    return _lax.broadcast(_tri_mask(n, cols, k), shape[:-2])


@partial(Jitted, static_argnames=("k",))
def tril(m: ArrayLike, k: int = 0) -> Array:
    """`m` with the elements above its `k`-th diagonal zeroed (the last two axes)."""
    m = _at_least_2d("tril", m)
    return _lax.select(_tri_which(m, k), m, jnp.zeros_like(m))


@partial(Jitted, static_argnames=("k",))
def triu(m: ArrayLike, k: int = 0) -> Array:
    """`m` with the elements below its `k`-th diagonal zeroed (the last two axes)."""
    m = _at_least_2d("triu", m)
    return _lax.select(_tri_which(m, k - 1), jnp.zeros_like(m), m)


@partial(Jitted, static_argnames=("offset", "axis1", "axis2"))
def diagonal(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
    """The `offset`-th diagonal of the matrices on axes `axis1` and `axis2`, as the last axis."""
    (a,) = ensure_arraylike("diagonal", a)
    ndim = len(shape_of(a))
    if ndim < 2:
        raise ValueError("diagonal requires an array of at least two dimensions.")
    offset = operator.index(offset)
    axis1 = canonicalize_axis(axis1, ndim)
    axis2 = canonicalize_axis(axis2, ndim)
    if axis1 == axis2:
        raise ValueError("axis1 and axis2 must not be equal")
    a = jnp.moveaxis(a, (axis1, axis2), (-2, -1))
    n, m = shape_of(a)[-2:]
    size = max(0, min(n + min(offset, 0), m - max(offset, 0)))
    i = jnp.arange(size)
    j = jnp.arange(abs(offset), abs(offset) + size)
    return a[..., i, j] if offset >= 0 else a[..., j, i]


def diag(v: ArrayLike, k: int = 0) -> Array:
    """The `k`-th diagonal of a 2-D `v`, or a square matrix with the 1-D `v` on it."""
    (v,) = ensure_arraylike("diag", v)
    return _diag(v, operator.index(k))


@partial(Jitted, static_argnames=("k",))
def _diag(v: Array, k: int) -> Array:
    """`diag` jitted as JAX's: a vector is padded to the diagonal's length and placed by an
    `eye` mask."""
    shape = shape_of(v)
    if len(shape) == 1:
        zero = _lax.full_like(v, 0, shape=())
        v = _lax.pad(v, zero, ((max(0, -k), max(0, k), 0),))
        mask = jnp.eye(shape[0] + abs(k), k=k, dtype=bool)
        return jnp.where(mask, jnp.expand_dims(v, 1), zero)
    if len(shape) == 2:
        return diagonal(v, offset=k)
    raise ValueError("diag input must be 1d or 2d")


@partial(Jitted, static_argnames=("axis1", "axis2", "dtype"))
def trace(
    a: ArrayLike, offset: int | ArrayLike = 0, axis1: int = 0, axis2: int = 1,
    dtype: DTypeLike | None = None, out: None = None,
) -> Array:  # fmt: skip
    """The sum along the `offset`-th diagonal (`offset` may be traced), jitted as JAX's: the
    matrices masked by `eye` and summed."""
    (a,) = ensure_arraylike("trace", a)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.trace is not supported.")
    nd = len(shape_of(a))
    if canonicalize_axis(axis1, nd) == canonicalize_axis(axis2, nd):
        raise ValueError(f"axis1 and axis2 can not be same. axis1={axis1} and axis2={axis2}")
    shape = shape_of(a)
    a = jnp.moveaxis(a, (axis1, axis2), (-2, -1))
    mask = jnp.eye(shape[axis1], shape[axis2], k=offset, dtype=bool)
    return jnp.sum(jnp.where(mask, a, jnp.zeros_like(a)), axis=(-2, -1), dtype=dtype)


@partial(Jitted, static_argnames=("n", "axis"))
def diff(
    a: ArrayLike, n: int = 1, axis: int = -1, prepend: ArrayLike | None = None,
    append: ArrayLike | None = None,
) -> Array:  # fmt: skip
    """The `n`-th discrete difference along `axis` (`not_equal` for booleans), jitted as
    JAX's with `n` and `axis` static."""
    (arr,) = ensure_arraylike("diff", a)
    n = operator.index(n)
    axis = operator.index(axis)
    if n == 0:
        return arr
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    ndim = len(shape_of(arr))
    if ndim == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
    axis = canonicalize_axis(axis, ndim)
    pieces = []
    for extra in (prepend, arr, append):
        if extra is None:
            continue
        if extra is not arr:
            (extra,) = ensure_arraylike("diff", extra)
            if not shape_of(extra):
                shape = list(shape_of(arr))
                shape[axis] = 1
                extra = jnp.broadcast_to(extra, tuple(shape))
        pieces.append(extra)
    if len(pieces) > 1:
        arr = jnp.concatenate(pieces, axis)
    upper = tuple(slice(1, None) if d == axis else slice(None) for d in range(ndim))
    lower = tuple(slice(None, -1) if d == axis else slice(None) for d in range(ndim))
    subtract = operator.ne if arr.dtype == np.bool_ else operator.sub
    for _ in range(n):
        arr = subtract(arr[upper], arr[lower])
    return arr


@Jitted
def ediff1d(
    ary: ArrayLike, to_end: ArrayLike | None = None, to_begin: ArrayLike | None = None
) -> Array:
    """Differences of consecutive elements of the flattened `ary`, with optional ends, jitted
    as JAX's."""
    (arr,) = ensure_arraylike("ediff1d", ary)
    arr = jnp.ravel(arr)
    result = _lax.sub(arr[1:], arr[:-1])
    if to_begin is not None:
        (begin,) = ensure_arraylike("ediff1d", to_begin)
        result = jnp.concatenate((jnp.ravel(begin.astype(arr.dtype)), result))
    if to_end is not None:
        (end,) = ensure_arraylike("ediff1d", to_end)
        result = jnp.concatenate((result, jnp.ravel(end.astype(arr.dtype))))
    return result


__all__ = ["diag", "diagonal", "diff", "ediff1d", "trace", "tri", "tril", "triu"]
