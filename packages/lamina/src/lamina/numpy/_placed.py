"""Array creation with `device=`: `zeros`, `ones`, `full`, `empty` and their `_like`s.

The functions of `lamina_core.numpy`, placed: outside a trace the result is committed to the
given device or sharding (`device_put`), as JAX's; under a trace `device` is ignored, as JAX's
(its `lax.full` places concrete values only).
"""

from __future__ import annotations

from typing import Any

from lamina_core import numpy as _jnp
from lamina_core.numpy import Array, ArrayLike, DTypeLike
from lamina_core.trace import Tracer
from lamina_runtime import device_put


def _placed(x: Array, device: Any) -> Array:
    if device is None or isinstance(x, Tracer):
        return x
    if x.weak_type:  # JAX builds the placed array from its shards: strongly typed
        x = _jnp.asarray(x, dtype=x.dtype)
    placed: Array = device_put(x, device)
    return placed


def zeros(shape: Any, dtype: DTypeLike | None = None, *, device: Any = None) -> Array:
    """An array of `shape` filled with zeros, committed to `device` if given."""
    return _placed(_jnp.zeros(shape, dtype), device)


def ones(shape: Any, dtype: DTypeLike | None = None, *, device: Any = None) -> Array:
    """An array of `shape` filled with ones, committed to `device` if given."""
    return _placed(_jnp.ones(shape, dtype), device)


def empty(shape: Any, dtype: DTypeLike | None = None, *, device: Any = None) -> Array:
    """As `zeros`."""
    return _placed(_jnp.empty(shape, dtype), device)


def full(
    shape: Any, fill_value: ArrayLike, dtype: DTypeLike | None = None, *, device: Any = None
) -> Array:
    """An array of `shape` filled with `fill_value`, committed to `device` if given."""
    return _placed(_jnp.full(shape, fill_value, dtype), device)


def zeros_like(
    a: ArrayLike, dtype: DTypeLike | None = None, shape: Any = None, *, device: Any = None
) -> Array:
    """Zeros shaped and typed as `a` unless given, committed to `device` if given."""
    return _placed(_jnp.zeros_like(a, dtype, shape), device)


def ones_like(
    a: ArrayLike, dtype: DTypeLike | None = None, shape: Any = None, *, device: Any = None
) -> Array:
    """Ones shaped and typed as `a` unless given, committed to `device` if given."""
    return _placed(_jnp.ones_like(a, dtype, shape), device)


def empty_like(
    prototype: ArrayLike, dtype: DTypeLike | None = None, shape: Any = None, *, device: Any = None
) -> Array:
    """As `zeros_like`."""
    return _placed(_jnp.empty_like(prototype, dtype, shape), device)


def full_like(
    a: ArrayLike,
    fill_value: ArrayLike,
    dtype: DTypeLike | None = None,
    shape: Any = None,
    *,
    device: Any = None,
) -> Array:
    """`fill_value` shaped and typed as `a` unless given, committed to `device` if given."""
    return _placed(_jnp.full_like(a, fill_value, dtype, shape), device)
