"""Helpers the lax differentiation rules share: constants, zeros, (un)broadcasting.

Registers how core builds zeros of a `ShapedArray` (`broadcast_in_dim` of a scalar zero, as
JAX prints it) and the scalar 1 that seeds `grad`. Rules import these to write JAX's formulas
with JAX's equation sequences.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core.interpreters import register_zeros_maker
from lamina_core.ir import AbstractValue, ShapedArray, dtypes, float0_zeros
from lamina_core.lax._elementwise import eq
from lamina_core.lax._reductions import reduce_sum
from lamina_core.lax._reshard import reshard_like
from lamina_core.lax._selection import select
from lamina_core.lax._shape import reshape
from lamina_core.lax._structural import _convert_element_type, broadcast, broadcast_in_dim
from lamina_core.trace import EVAL_TRACE, current_trace, pvary, pvary_like, typeof
from lamina_core.transforms import register_one_maker


def aval_of(x: Any) -> ShapedArray:
    aval = getattr(x, "aval", None)  # once: a tracer's `aval` may be computed
    if not isinstance(aval, AbstractValue):
        aval = typeof(x)
    assert isinstance(aval, ShapedArray)
    return aval


def const(x: Any, value: Any) -> np.ndarray:
    """`value` as a strongly typed scalar of `x`'s dtype (prints as a literal)."""
    return np.array(value, dtype=aval_of(x).dtype)


def one(x: Any) -> Any:
    """A scalar 1 with `x`'s dtype and weak type, laid out over `x`'s mesh (JAX's `_one`)."""
    aval = aval_of(x)
    return reshard_like(_convert_element_type(1, aval.dtype, aval.weak_type), aval)


def zeros_like_shaped(aval: AbstractValue) -> Any:
    assert isinstance(aval, ShapedArray)
    if aval.dtype == dtypes.float0:
        if current_trace() is EVAL_TRACE:
            # Eagerly a host value: float0 has no device representation.
            return float0_zeros(aval.shape)
        # Broadcast from a scalar, as JAX does: under a trace it prints as `broadcast_in_dim`.
        return pvary(broadcast(np.zeros((), dtypes.float0), aval.shape), tuple(aval.vma))
    zero = _convert_element_type(0, aval.dtype, aval.weak_type)
    # Zeros of a type varying over manual axes vary over them (a `pvary`, as JAX's).
    return pvary(broadcast(zero, aval.shape, out_sharding=_sharding(aval)), tuple(aval.vma))


def _sharding(aval: ShapedArray) -> Any:
    """`aval.sharding` as a rule passes it on: None for a type without a mesh (what the
    primitive makes of the empty mesh's sharding anyway, without building it)."""
    return None if aval.mesh is None else aval.sharding


register_zeros_maker(ShapedArray, zeros_like_shaped)
register_one_maker(ShapedArray, one)


def zeros_like(x: Any) -> Any:
    return zeros_like_shaped(aval_of(x))


def unbroadcast(aval: ShapedArray, x: Any) -> Any:
    """Sum `x` down to `aval`'s shape: the transpose of implicit size-1 broadcasting."""
    x_shape = aval_of(x).shape
    if x_shape == aval.shape:
        return x
    if not aval.shape:
        return reduce_sum(x, list(range(len(x_shape))))
    dims = [i for i, (a, b) in enumerate(zip(x_shape, aval.shape, strict=True)) if a != b]
    x = reduce_sum(x, dims) if dims else x
    return reshape(x, aval.shape, out_sharding=_sharding(aval))


def maybe_broadcast(shape: tuple[int, ...], x: Any) -> Any:
    """`x` broadcast to `shape` (from a scalar, or from size-1 dimensions)."""
    x_shape = aval_of(x).shape
    if x_shape == shape:
        return x
    if not x_shape:
        return broadcast_in_dim(x, shape, ())
    dims = [i for i, (a, b) in enumerate(zip(x_shape, shape, strict=True)) if a == b]
    squeezed = [x_shape[i] for i in dims]
    return broadcast_in_dim(reshape(x, squeezed), shape, dims)


def full_like(x: Any, value: Any, shape: tuple[int, ...] | None = None, dtype: Any = None) -> Any:
    """`value` in `x`'s dtype and weak type (or `dtype`, strong), shaped like `x` (or
    `shape`), as JAX's `full_like`: a literal at rank 0, else `broadcast_in_dim` of one."""
    aval = aval_of(x)
    if dtype is None:
        fill = _convert_element_type(value, aval.dtype, aval.weak_type)
    else:
        fill = _convert_element_type(value, dtype, False)
    return pvary_like(broadcast(fill, aval.shape if shape is None else shape), x)


def replace_zero(x: Any) -> Any:
    """`x` with its zeros replaced by ones (`select(eq(x, 0), ones, x)`, JAX's order)."""
    return select(eq(x, const(x, 0)), full_like(x, 1), x)
