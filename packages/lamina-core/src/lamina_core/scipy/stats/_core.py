"""`jax.scipy.stats.mode`, `rankdata` and `sem`: summary statistics of samples, jitted
functions of JAX's names and static arguments, with JAX 0.10.2's algorithms (`mode` counts
unique values of each slice under `vmap`; `rankdata` sorts once and ranks from the sort
order; `sem` is the standard deviation over the square root of the count)."""

from __future__ import annotations

import math
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.ir import dtypes
from lamina_core.numpy import at, canonicalize_axis, dtype_of, shape_of
from lamina_core.numpy import promotion as p
from lamina_core.transforms import Jitted, vmap

Array = Any

_NAN_POLICIES = ("propagate", "omit", "raise")


class ModeResult(NamedTuple):
    """`mode`'s result: the most frequent values and how often they occur."""

    mode: Array
    count: Array


def _check_nan_policy(name: str, nan_policy: str) -> None:
    if nan_policy not in _NAN_POLICIES:
        raise ValueError(
            f"Illegal nan_policy value {nan_policy!r}; expected one of "
            "{'propagate', 'omit', 'raise'}"
        )
    if nan_policy == "omit":
        raise NotImplementedError(f"Logic for `nan_policy` of {nan_policy} is not implemented")
    if nan_policy == "raise":
        raise NotImplementedError(
            f"In order to best JIT compile `{name}`, we cannot know whether `x` contains nans. "
            f"Please check if nans exist in `x` outside of the `{name}` function."
        )


def _default_float() -> np.dtype:
    return dtypes.canonicalize_dtype(np.float64)


@partial(Jitted, static_argnames=["axis", "nan_policy", "keepdims"])
def mode(
    a: Any, axis: int | None = 0, nan_policy: str = "propagate", keepdims: bool = False
) -> ModeResult:
    """The most frequent value along `axis` (all of `a` if None) and its count; the smallest
    of equally frequent values. Only nan_policy='propagate'."""
    p.check_arraylike("mode", a)
    x = jnp.atleast_1d(a)
    _check_nan_policy("mode", nan_policy)
    shape = shape_of(x)
    if axis is not None:
        axis = canonicalize_axis(axis, len(shape))
    if keepdims:
        out_shape = tuple(1 if axis is None or i == axis else s for i, s in enumerate(shape))
    elif axis is None:
        out_shape = ()
    else:
        out_shape = tuple(s for i, s in enumerate(shape) if i != axis)
    if axis is None:
        axis = 0
        x = jnp.ravel(x)
    x = jnp.moveaxis(x, axis, 0)
    rows = shape_of(x)
    x = jnp.reshape(x, (rows[0], math.prod(rows[1:])))

    def one(column: Array) -> tuple[Array, Array]:
        size = shape_of(column)[0]
        if size == 0:
            dt = _default_float()
            return jnp.array(np.nan, dtype=dt), jnp.array(0, dtype=dt)
        vals, counts = jnp.unique(column, return_counts=True, size=size)
        return vals[jnp.argmax(counts)], jnp.max(counts)

    vals, counts = vmap(one, in_axes=1)(x)
    return ModeResult(jnp.reshape(vals, out_shape), jnp.reshape(counts, out_shape))


def _invert_permutation(i: Array) -> Array:
    size = shape_of(i)[0]
    return at(jnp.empty_like(i))[i].set(jnp.arange(size, dtype=dtype_of(i)))


@partial(Jitted, static_argnames=["method", "axis", "nan_policy"])
def rankdata(
    a: Any, method: str = "average", *, axis: int | None = None, nan_policy: str = "propagate"
) -> Array:
    """The ranks (from 1) of the values of `a` (flattened, or along `axis`), ties resolved by
    `method`: 'average', 'min', 'max', 'dense' or 'ordinal'; all nan if any value is nan."""
    p.check_arraylike("rankdata", a)
    _check_nan_policy("rankdata", nan_policy)
    if method not in ("average", "min", "max", "dense", "ordinal"):
        raise ValueError(f"unknown method '{method}'")
    if axis is not None:
        return jnp.apply_along_axis(rankdata, axis, a, method)
    a = jnp.ravel(a)
    out_dtype = _default_float()

    def ranks(a: Array) -> Array:
        size = shape_of(a)[0]
        arr, sorter = lax.sort_key_val(a, jnp.arange(size))
        inv = _invert_permutation(sorter)
        if method == "ordinal":
            return jnp.astype(inv + 1, out_dtype)
        obs = jnp.concatenate([jnp.array([True]), arr[1:] != arr[:-1]])
        dense = jnp.cumsum(obs)[inv]
        if method == "dense":
            return jnp.astype(dense, out_dtype)
        count = jnp.astype(jnp.nonzero(obs, size=size + 1, fill_value=size)[0], out_dtype)
        if method == "max":
            return count[dense]
        if method == "min":
            return count[dense - 1] + 1
        return 0.5 * (count[dense] + count[dense - 1] + 1)

    def all_nan(a: Array) -> Array:
        return jnp.full_like(a, jnp.nan, out_dtype)

    return lax.cond(jnp.any(jnp.isnan(a)), all_nan, ranks, a)


@partial(Jitted, static_argnames=["axis", "nan_policy", "keepdims"])
def sem(
    a: Any,
    axis: int | None = 0,
    ddof: int = 1,
    nan_policy: str = "propagate",
    *,
    keepdims: bool = False,
) -> Array:
    """The standard error of the mean along `axis`: std(ddof) / sqrt(n); with
    nan_policy='omit', of the values that are not nan."""
    (b,) = p.promote_args_inexact("sem", a)
    shape = shape_of(b)
    if nan_policy == "propagate":
        size = math.prod(shape) if axis is None else shape[axis]
        std = jnp.std(b, axis, ddof=ddof, keepdims=keepdims)
        return std / jnp.astype(jnp.sqrt(size), dtype_of(b))
    if nan_policy == "omit":
        count = jnp.sum(~jnp.isnan(b), axis, keepdims=keepdims)
        std = jnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims)
        return std / jnp.astype(jnp.sqrt(count), dtype_of(b))
    raise ValueError(f"{nan_policy} is not supported")
