"""Reductions: sum, with `axis`, `dtype`, `keepdims`, `initial`."""

from __future__ import annotations

from collections.abc import Sequence

from lamina_core import dtypes as _dtypes
from lamina_core import lax as _lax
from lamina_core.lax._structural import _convert_element_type
from lamina_core.numpy import _ufuncs
from lamina_core.numpy._util import (
    Array,
    ArrayLike,
    DTypeLike,
    canonical_axes,
    shape_of,
)


def sum(
    a: ArrayLike,
    axis: int | Sequence[int] | None = None,
    dtype: DTypeLike | None = None,
    out: None = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike | None = None,
    promote_integers: bool = True,
) -> Array:
    """Sum of elements over `axis`, as `jax.numpy.sum`."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.sum is not supported.")
    if where is not None:
        raise NotImplementedError("sum(where=...) is not supported yet")
    shape = shape_of(a)
    axes = canonical_axes(axis, len(shape), "sum")
    if dtype is None:
        in_dtype = _dtypes.dtype(a, canonicalize=True)
        if promote_integers and in_dtype.kind in "bi":
            dtype = _dtypes.canonicalize_dtype(_dtypes.int64)
        elif promote_integers and in_dtype.kind == "u":
            dtype = _dtypes.canonicalize_dtype(_dtypes.uint64)
        elif in_dtype.kind == "b":
            dtype = _dtypes.canonicalize_dtype(_dtypes.int64)
    if dtype is not None:
        a = _convert_element_type(a, dtype, _dtypes.is_weakly_typed(a))
    result = _lax.reduce_sum(a, axes)
    if initial is not None:
        result = _ufuncs.add(result, initial)
    if keepdims:
        kept = tuple(1 if i in axes else d for i, d in enumerate(shape))
        result = _lax.broadcast_in_dim(
            result, kept, tuple(i for i in range(len(shape)) if i not in axes)
        )
    return result


__all__ = [
    "sum",
]
