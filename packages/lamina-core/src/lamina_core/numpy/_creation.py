"""Array creation: zeros, ones, full, asarray, array, and the *_like forms."""

from __future__ import annotations

import operator
from typing import Any

import numpy as _np

from lamina_core import dtypes as _dtypes
from lamina_core import lax as _lax
from lamina_core.lax._structural import _convert_element_type
from lamina_core.numpy._util import (
    Array,
    ArrayLike,
    DTypeLike,
    dtype_of,
    shape_of,
)


def _shape_arg(shape: Any, name: str) -> tuple[int, ...]:
    if isinstance(shape, (int, _np.integer)):
        return (int(shape),)
    try:
        return tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(
            f"{name}: shape must be an int or a sequence of ints, got {shape!r}"
        ) from None


def full(shape: Any, fill_value: ArrayLike, dtype: DTypeLike | None = None) -> Array:
    shape = _shape_arg(shape, "full")
    if shape_of(fill_value):
        value = asarray(fill_value, dtype)
        return _lax.broadcast_in_dim(
            value, shape, tuple(range(len(shape) - len(shape_of(value)), len(shape)))
        )
    return _lax.full(shape, fill_value, dtype)


def zeros(shape: Any, dtype: DTypeLike | None = None) -> Array:
    return _lax.full(
        _shape_arg(shape, "zeros"), 0, _dtypes.canonicalize_dtype(dtype or _dtypes.float32)
    )


def ones(shape: Any, dtype: DTypeLike | None = None) -> Array:
    return _lax.full(
        _shape_arg(shape, "ones"), 1, _dtypes.canonicalize_dtype(dtype or _dtypes.float32)
    )


def zeros_like(a: ArrayLike, dtype: DTypeLike | None = None) -> Array:
    return zeros(shape_of(a), dtype or dtype_of(a))


def ones_like(a: ArrayLike, dtype: DTypeLike | None = None) -> Array:
    return ones(shape_of(a), dtype or dtype_of(a))


def full_like(a: ArrayLike, fill_value: ArrayLike, dtype: DTypeLike | None = None) -> Array:
    return full(shape_of(a), fill_value, dtype or dtype_of(a))


def asarray(a: ArrayLike, dtype: DTypeLike | None = None) -> Array:
    """`a` as an array of `dtype`; constants stay host values, tracers are converted."""
    if dtype is not None:
        return _convert_element_type(a, dtype, False)
    if isinstance(a, (list, tuple)):
        return _np.asarray(a, dtype=_dtypes.dtype(_np.asarray(a), canonicalize=True))
    return (
        a
        if not isinstance(a, (bool, int, float, complex))
        else _convert_element_type(
            a, _dtypes.dtype(a, canonicalize=True), _dtypes.is_weakly_typed(a)
        )
    )


def array(a: ArrayLike, dtype: DTypeLike | None = None, copy: bool = True) -> Array:
    out = asarray(a, dtype)
    return out.copy() if copy and isinstance(out, _np.ndarray) else out


__all__ = [
    "array",
    "asarray",
    "full",
    "full_like",
    "ones",
    "ones_like",
    "zeros",
    "zeros_like",
]
