"""`jnp.roll`: a static shift slices and joins (`_roll_static`), any other shift — traced, or
not an integer — takes its remainder and slices the array joined to itself at that offset
(`_roll_dynamic`), each in a nested `jit` named as JAX's."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import numpy as _np

import lamina_core.numpy as jnp
from lamina_core import lax as _lax
from lamina_core.numpy._shape import (
    _canonicalize_axis,
    _index_tuple,
    _ndim,
    _reshape,
    ravel,
)
from lamina_core.numpy._util import Array, ArrayLike, check_arraylike_or_traced_hi, shape_of
from lamina_core.trace import Tracer
from lamina_core.transforms import Jitted

__all__ = ["roll"]


def roll(
    a: ArrayLike, shift: ArrayLike | Sequence[int], axis: int | Sequence[int] | None = None
) -> Array:
    """`a` rotated by `shift` along `axis` (the flattened array when None)."""
    check_arraylike_or_traced_hi("roll", a)
    if axis is None:
        return _reshape(roll(ravel(a), shift, 0), shape_of(a))
    ndim = _ndim(a)
    axes = tuple(_canonicalize_axis(ax, ndim, "jnp.roll") for ax in _index_tuple(axis))
    try:
        if isinstance(shift, Tracer):  # not a static index: never iterated to find out
            raise TypeError
        shifts = _index_tuple(shift)
    except TypeError:
        return _roll_dynamic(a, jnp.asarray(shift), axes)
    return _roll_static(a, shifts, axes)


@partial(Jitted, static_argnums=(1, 2))
def _roll_static(a: Array, shift: Sequence[int], axis: Sequence[int]) -> Array:
    for ax, s in zip(*_np.broadcast_arrays(axis, shift), strict=True):
        size = shape_of(a)[ax]
        if size == 0:
            continue
        i = int((-s) % size)
        a = _lax.concatenate(
            [_lax.slice_in_dim(a, i, size, axis=ax), _lax.slice_in_dim(a, 0, i, axis=ax)],
            dimension=int(ax),
        )
    return a


@partial(Jitted, static_argnums=(2,))
def _roll_dynamic(a: Array, shift: Array, axis: Sequence[int]) -> Array:
    shape = _np.broadcast_shapes(shape_of(shift), _np.shape(axis))
    if len(shape) != 1:
        raise ValueError("'shift' and 'axis' arguments to roll must be scalars or 1D arrays")
    shifts = jnp.broadcast_to(shift, shape)
    for k, ax in enumerate(_np.broadcast_to(axis, shape)):
        size = shape_of(a)[ax]
        length = _np.array(size, _np.int32)
        # One shift out of the vector, as iterating it would take it.
        s = _lax.squeeze(_lax.slice_in_dim(shifts, k, k + 1), (0,))
        offset = jnp.remainder(
            _lax.convert_element_type(s, _np.int32), _lax.max(length, _np.int32(1))
        )
        doubled = _lax.concatenate([a, a], int(ax))
        a = _lax.dynamic_slice_in_dim(doubled, _lax.sub(length, offset), size, axis=int(ax))
    return a
