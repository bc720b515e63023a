"""Reductions that ignore NaNs (`nansum`, `nanprod`, `nanmax`, `nanmin`, `nanmean`), and
`count_nonzero`, `ptp`, `nan_to_num`, with `jax.numpy`'s semantics: a NaN counts as the
reduction's identity; `nanmax`/`nanmin` of all-NaN slices are NaN."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

import lamina_core.numpy as jnp
from lamina_core import lax as _lax
from lamina_core.ir import dtypes as _dtypes
from lamina_core.numpy._reductions import _optional_axes, _user_dtype, check_where, ensure_arraylike
from lamina_core.numpy._util import Array, ArrayLike, DTypeLike
from lamina_core.transforms import Jitted

Axis = int | tuple[int, ...] | None


def _inexact(a: Any) -> bool:
    return bool(_dtypes.issubdtype(a.dtype, np.inexact))


def nan_as(a: Any, identity: float) -> Any:
    """`a` with its NaNs replaced by `identity` (a reduction's neutral value); `a` itself
    for integer and boolean arrays, which hold no NaNs."""
    if not _inexact(a):
        return a
    return jnp.where(_lax.ne(a, a), np.array(identity, a.dtype), a)


def _nan_reduction(
    name: str, reduce: Any, identity: float, nan_if_all_nan: bool, a: ArrayLike, axis: Axis,
    keepdims: bool, where: ArrayLike | None, **kwargs: Any,
) -> Array:  # fmt: skip
    """`reduce` with NaNs counted as `identity`, as JAX stages it (NaN where a slice is all
    NaN when `nan_if_all_nan`; `where` does not mask that test, as in JAX)."""
    (a,) = ensure_arraylike(name, a)
    where = check_where(name, where)
    if not _inexact(a):
        return reduce(a, axis=axis, keepdims=keepdims, where=where, **kwargs)
    out = reduce(nan_as(a, identity), axis=axis, keepdims=keepdims, where=where, **kwargs)
    if not nan_if_all_nan:
        return out
    all_nan = jnp.all(_lax.ne(a, a), axis=axis, keepdims=keepdims)
    return jnp.where(all_nan, np.array(np.nan, a.dtype), out)


@partial(Jitted, static_argnames=("axis", "dtype", "keepdims"))
def nansum(
    a: ArrayLike, axis: Axis = None, dtype: DTypeLike | None = None, out: None = None,
    keepdims: bool = False, initial: ArrayLike | None = None, where: ArrayLike | None = None,
) -> Array:  # fmt: skip
    """The sum, NaNs counted as zero (jitted as JAX's)."""
    return _nan_reduction("nansum", jnp.sum, 0, False, a, axis, keepdims, where, dtype=dtype,
                          out=out, initial=initial)  # fmt: skip


@partial(Jitted, static_argnames=("axis", "dtype", "keepdims"))
def nanprod(
    a: ArrayLike, axis: Axis = None, dtype: DTypeLike | None = None, out: None = None,
    keepdims: bool = False, initial: ArrayLike | None = None, where: ArrayLike | None = None,
) -> Array:  # fmt: skip
    """The product, NaNs counted as one (jitted as JAX's)."""
    return _nan_reduction("nanprod", jnp.prod, 1, False, a, axis, keepdims, where, dtype=dtype,
                          out=out, initial=initial)  # fmt: skip


@partial(Jitted, static_argnames=("axis", "keepdims"))
def nanmax(
    a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False,
    initial: ArrayLike | None = None, where: ArrayLike | None = None,
) -> Array:  # fmt: skip
    """The maximum ignoring NaNs (NaN where a slice is all NaN and there is no `initial`)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.nanmax is not supported.")
    return _nan_reduction("nanmax", jnp.max, -np.inf, initial is None, a, axis, keepdims, where,
                          initial=initial)  # fmt: skip


@partial(Jitted, static_argnames=("axis", "keepdims"))
def nanmin(
    a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False,
    initial: ArrayLike | None = None, where: ArrayLike | None = None,
) -> Array:  # fmt: skip
    """The minimum ignoring NaNs (NaN where a slice is all NaN and there is no `initial`)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.nanmin is not supported.")
    return _nan_reduction("nanmin", jnp.min, np.inf, initial is None, a, axis, keepdims, where,
                          initial=initial)  # fmt: skip


@partial(Jitted, static_argnames=("axis", "dtype", "keepdims"))
def nanmean(
    a: ArrayLike, axis: Axis = None, dtype: DTypeLike | None = None, out: None = None,
    keepdims: bool = False, where: ArrayLike | None = None,
) -> Array:  # fmt: skip
    """The mean of the elements that are not NaN (NaN where there are none), jitted as
    JAX's: the NaN-free sum over the count of non-NaN elements."""
    (a,) = ensure_arraylike("nanmean", a)
    where = check_where("nanmean", where)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.nanmean is not supported.")
    if not _inexact(a):
        return jnp.mean(a, axis, dtype, out, keepdims, where=where)
    dtype = a.dtype if dtype is None else _user_dtype(dtype)
    not_nan = _lax.bitwise_not(_lax.ne(a, a))
    count = jnp.sum(not_nan, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    return _lax.div(nansum(a, axis, dtype=dtype, keepdims=keepdims, where=where), count)


@partial(Jitted, static_argnames=("axis", "keepdims"))
def count_nonzero(a: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """How many elements are not zero (along `axis`), as an integer array."""
    (a,) = ensure_arraylike("count_nonzero", a)
    return jnp.sum(jnp.not_equal(a, jnp.zeros((), a.dtype)), axis=axis, keepdims=keepdims,
                   dtype=_dtypes.canonicalize_dtype(np.int64))  # fmt: skip


def ptp(a: ArrayLike, axis: Axis = None, out: None = None, keepdims: bool = False) -> Array:
    """The range of values (maximum minus minimum) along `axis`, as one jitted call (`_ptp`,
    as JAX stages it)."""
    (a,) = ensure_arraylike("ptp", a)
    return _ptp(a, _optional_axes(axis), out, keepdims)


@partial(Jitted, static_argnames=("axis", "keepdims"))
def _ptp(a: Array, axis: Axis = None, out: None = None, keepdims: bool = False) -> Array:
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.ptp is not supported.")
    return _lax.sub(jnp.max(a, axis=axis, keepdims=keepdims),
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
