"""`jnp.repeat`: a scalar count broadcasts and reshapes; per-element counts, or a static
`total_repeat_length`, build gather indices by JAX's scatter and cumsum, with the same
equations JAX stages.

The per-element path never materializes a `len(a) x max(repeats)` block: scattering a 1 at
each block's start into `total_repeat_length` zeros and taking the running sum gives, for every
output position, the index of the element it repeats.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as _np

from lamina_core import lax as _lax
from lamina_core.ir import canonicalize_sharding
from lamina_core.lax import under_auto_axes
from lamina_core.numpy._creation import array, asarray, full, zeros
from lamina_core.numpy._cumulative import cumsum
from lamina_core.numpy._index_update import at
from lamina_core.numpy._indexing import take
from lamina_core.numpy._roll import roll
from lamina_core.numpy._shape import (
    _canonicalize_axis,
    _ndim,
    _reshape,
    broadcast_to,
    ravel,
)
from lamina_core.numpy._ufuncs import subtract
from lamina_core.numpy._util import Array, ArrayLike, check_arraylike, shape_of
from lamina_core.trace import Tracer, concrete_or_error

__all__ = ["repeat"]

_TRACED_TOTAL = (
    "When jit-compiling jnp.repeat, the total number of repeats must be static. To fix this, "
    "either specify a static value for `repeats`, or pass a static value to "
    "`total_repeat_length`."
)


def repeat(
    a: ArrayLike,
    repeats: ArrayLike,
    axis: int | None = None,
    *,
    total_repeat_length: int | None = None,
    out_sharding: Any = None,
) -> Array:
    """Each element of `a` repeated `repeats` times along `axis` (the flattened `a` if None).

    Args:
        repeats: one count, or one per element along `axis`; traced counts need
            `total_repeat_length`.
        total_repeat_length: the static output length along `axis`: past `sum(repeats)` the
            last element repeats, short of it the output is cut.

        out_sharding: the result's sharding; the repeat runs under `auto_axes` (as JAX's).

    Raises:
        ConcretizationTypeError: traced `repeats` without `total_repeat_length`.
    """
    if _is_dim(repeats):
        check_arraylike("repeat", a, traced_hi=True)
    else:
        check_arraylike("repeat", a, repeats, traced_hi=True)
    arr = asarray(a)
    if axis is None:
        arr = ravel(arr)
        axis = 0
    if out_sharding is None:
        return _repeat(repeats, arr, axis, total_repeat_length)
    sharding = canonicalize_sharding(out_sharding, "repeat")
    if total_repeat_length is None:
        return under_auto_axes(lambda x: _repeat(repeats, x, axis, None), sharding)(arr)
    total = total_repeat_length
    return under_auto_axes(lambda r, x: _repeat(r, x, axis, total), sharding)(repeats, arr)


def _repeat(repeats: Any, arr: Array, axis: int, total_repeat_length: int | None) -> Array:
    axis = operator.index(axis)
    if total_repeat_length is None:
        repeats = concrete_or_error(repeats, _TRACED_TOTAL)
        if _np.ndim(repeats) == 0 and _ndim(arr) != 0:
            return _repeat_scalar(arr, operator.index(repeats), axis)
        counts = _np.ravel(repeats)
        if _ndim(arr) != 0:
            counts = _np.broadcast_to(counts, [shape_of(arr)[axis]])
        total_repeat_length = int(_np.sum(counts))
        repeats = counts
    else:
        repeats = ravel(repeats)
        if _ndim(arr) != 0:
            repeats = broadcast_to(repeats, [shape_of(arr)[axis]])
    if _ndim(arr) == 0:
        if _np.shape(repeats) == (1,):
            return full([total_repeat_length], arr)
        raise ValueError(
            "`repeat` with a scalar parameter `a` is only implemented for scalar values of the "
            "parameter `repeats`."
        )
    if total_repeat_length == 0:
        shape = list(shape_of(arr))
        shape[axis] = 0
        return _reshape(array([], dtype=arr.dtype), shape)
    if shape_of(arr)[axis] == 0:
        return arr
    return take(arr, _gather_indices(repeats, total_repeat_length), axis=axis)


def _is_dim(x: Any) -> bool:
    """A count JAX takes as a dimension size (an integer), so not checked as an array."""
    if isinstance(x, Tracer):
        return False
    try:
        operator.index(x)
    except TypeError:
        return False
    return True


def _repeat_scalar(arr: Array, count: int, axis: int) -> Array:
    """Every element `count` times: broadcast along a new axis after `axis`, then merged."""
    shape = list(shape_of(arr))
    axis = _canonicalize_axis(axis, len(shape), "jnp.repeat")
    aux = axis + 1
    expanded = [*shape[:aux], count, *shape[aux:]]
    arr = _lax.broadcast_in_dim(arr, expanded, [i for i in range(len(expanded)) if i != aux])
    shape[axis] *= count
    return _reshape(arr, shape)


def _gather_indices(repeats: Any, total: int) -> Array:
    """For each of `total` output positions, the index of the element it repeats: e.g. counts
    [1, 2, 0, 5] start blocks at [0, 1, 3, 3], marked [1, 1, 0, 2, 0, 0, 0, 0], whose running
    sum less one is [0, 1, 1, 3, 3, 3, 3, 3]."""
    # `axis=0` on the 1-D counts: JAX's `axis=None` ravels an array, a no-op it stages no
    # equation for, where Lamina would reshape NumPy counts. `at(x)` rather than `x.at`: eager
    # values here may be NumPy arrays.
    exclusive = at(roll(repeats, shift=1, axis=0))[0].set(0)
    starts = cumsum(exclusive)
    markers = at(zeros([total], dtype="int32"))[starts].add(1)
    return subtract(cumsum(markers), 1)
