"""Reductions that ignore NaNs (`nansum`, `nanprod`, `nanmax`, `nanmin`, `nanmean`), and
`count_nonzero`, `ptp`, `nan_to_num`, with `jax.numpy`'s semantics: a NaN counts as the
reduction's identity; `nanmax`/`nanmin` of all-NaN slices are NaN."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

import lamina_core.numpy as jnp
from lamina_core import dtypes as _dtypes
from lamina_core import lax as _lax
from lamina_core.jit import Jitted
from lamina_core.numpy._reductions import ensure_arraylike
from lamina_core.numpy._util import Array, ArrayLike, DTypeLike

Axis = int | tuple[int, ...] | None


def _inexact(a: Any) -> bool:
    return bool(_dtypes.issubdtype(a.dtype, np.inexact))


def nan_as(a: Any, identity: float) -> Any:
    """`a` with its NaNs replaced by `identity` (a reduction's neutral value); `a` itself
    for integer and boolean arrays, which hold no NaNs."""
    if not _inexact(a):
        return a
    return jnp.where(jnp.isnan(a), jnp.full_like(a, identity), a)


def nansum(
    a: ArrayLike, axis: Axis = None, dtype: DTypeLike | None = None, out: None = None,
    keepdims: bool = False, initial: ArrayLike | None = None, where: ArrayLike | None = None,
) -> Array:  # fmt: skip
    """The sum, NaNs counted as zero."""
    (a,) = ensure_arraylike("nansum", a)
    return jnp.sum(nan_as(a, 0), axis=axis, dtype=dtype, out=out, keepdims=keepdims,
                   initial=initial, where=where)  # fmt: skip


def nanprod(
    a: ArrayLike, axis: Axis = None, dtype: DTypeLike | None = None, out: None = None,
    keepdims: bool = False, initial: ArrayLike | None = None, where: ArrayLike | None = None,
) -> Array:  # fmt: skip
    """The product, NaNs counted as one."""
    (a,) = ensure_arraylike("nanprod", a)
    return jnp.prod(nan_as(a, 1), axis=axis, dtype=dtype, out=out, keepdims=keepdims,
                    initial=initial, where=where)  # fmt: skip


def _nan_extremum(
    name: str, reduce: Any, fill: float, a: ArrayLike, axis: Axis, keepdims: bool,
    initial: ArrayLike | None, where: ArrayLike | None,
) -> Array:  # fmt: skip
    (a,) = ensure_arraylike(name, a)
    if not _inexact(a):
        return reduce(a, axis=axis, keepdims=keepdims, initial=initial, where=where)
    nan = jnp.isnan(a)
    out = reduce(jnp.where(nan, jnp.full_like(a, fill), a), axis=axis, keepdims=keepdims,
                 initial=initial, where=where)  # fmt: skip
    all_nan = jnp.all(nan, axis=axis, keepdims=keepdims, where=where)
    return jnp.where(all_nan, jnp.full_like(out, np.nan), out)


def nanmax(
    a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False,
    initial: ArrayLike | None = None, where: ArrayLike | None = None,
) -> Array:  # fmt: skip
    """The maximum ignoring NaNs (NaN where a slice is all NaN)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.nanmax is not supported.")
    return _nan_extremum("nanmax", jnp.max, -np.inf, a, axis, keepdims, initial, where)


def nanmin(
    a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False,
    initial: ArrayLike | None = None, where: ArrayLike | None = None,
) -> Array:  # fmt: skip
    """The minimum ignoring NaNs (NaN where a slice is all NaN)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.nanmin is not supported.")
    return _nan_extremum("nanmin", jnp.min, np.inf, a, axis, keepdims, initial, where)


def nanmean(
    a: ArrayLike, axis: Axis = None, dtype: DTypeLike | None = None, out: None = None,
    keepdims: bool = False, where: ArrayLike | None = None,
) -> Array:  # fmt: skip
    """The mean of the elements that are not NaN (NaN where there are none)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.nanmean is not supported.")
    (a,) = ensure_arraylike("nanmean", a)
    if not _inexact(a):
        return jnp.mean(a, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    nan = jnp.isnan(a)
    total = nansum(a, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    count = jnp.sum(jnp.logical_not(nan), axis=axis, dtype=total.dtype, keepdims=keepdims,
                    where=where)  # fmt: skip
    return jnp.divide(total, count)


@partial(Jitted, static_argnames=("axis", "keepdims"))
def count_nonzero(a: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """How many elements are not zero (along `axis`), as an integer array."""
    (a,) = ensure_arraylike("count_nonzero", a)
    return jnp.sum(jnp.not_equal(a, jnp.zeros((), a.dtype)), axis=axis, keepdims=keepdims,
                   dtype=_dtypes.canonicalize_dtype(np.int64))  # fmt: skip


def ptp(a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False) -> Array:
    """The range of values (maximum minus minimum) along `axis`."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.ptp is not supported.")
    (a,) = ensure_arraylike("ptp", a)
    return jnp.subtract(jnp.max(a, axis=axis, keepdims=keepdims),
                        jnp.min(a, axis=axis, keepdims=keepdims))  # fmt: skip


@Jitted
def nan_to_num(
    x: ArrayLike, copy: bool = True, nan: ArrayLike = 0.0, posinf: ArrayLike | None = None,
    neginf: ArrayLike | None = None,
) -> Array:  # fmt: skip
    """`x` with NaNs replaced by `nan` and infinities by `posinf`/`neginf` (by default the
    largest and most negative finite values of its dtype). Jitted as JAX's (every argument
    traced); a complex `x` is handled part by part."""
    del copy
    (x,) = ensure_arraylike("nan_to_num", x)
    dtype = x.dtype
    if not _inexact(x):
        return x
    if _dtypes.issubdtype(dtype, np.complexfloating):
        return _lax.complex(
            nan_to_num(_lax.real(x), nan=nan, posinf=posinf, neginf=neginf),
            nan_to_num(_lax.imag(x), nan=nan, posinf=posinf, neginf=neginf),
        )
    info = _dtypes.finfo(dtype)
    high = info.max if posinf is None else posinf
    low = info.min if neginf is None else neginf
    out = jnp.where(jnp.isnan(x), jnp.asarray(nan, dtype=dtype), x)
    out = jnp.where(jnp.isposinf(out), jnp.asarray(high, dtype=dtype), out)
    return jnp.where(jnp.isneginf(out), jnp.asarray(low, dtype=dtype), out)


__all__ = [
    "count_nonzero",
    "nan_to_num",
    "nanmax",
    "nanmean",
    "nanmin",
    "nanprod",
    "nansum",
    "ptp",
]
