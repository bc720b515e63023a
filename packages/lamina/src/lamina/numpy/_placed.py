"""Array creation with `device=`: `zeros`, `ones`, `full`, `empty`, their `_like`s, `arange`,
`array`, `asarray`, `astype`, `eye` and `linspace`.

The functions of `lamina_core.numpy`, placed: outside a trace the result is committed to the
given device or sharding (`device_put`), as JAX's; under a trace `device` is ignored, as JAX's
(its `lax.full` places concrete values only). `out_sharding=` is lamina-core's (it types the
staged result), so it holds under a trace too; giving both is JAX's `ValueError`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import numpy as _jnp
from lamina_core.ir import Mesh, NamedSharding, PartitionSpec, get_concrete_mesh
from lamina_core.ir import dtypes as _dtypes
from lamina_core.numpy import Array, ArrayLike, DTypeLike
from lamina_core.trace import Tracer
from lamina_runtime import device_put

__all__ = [
    "arange",
    "array",
    "asarray",
    "astype",
    "empty",
    "empty_like",
    "eye",
    "full",
    "full_like",
    "linspace",
    "ones",
    "ones_like",
    "zeros",
    "zeros_like",
]


def _placed(x: Array, device: Any, *, keep_weak: bool = False) -> Array:
    if device is None or isinstance(x, Tracer):
        return x
    if x.weak_type and not keep_weak:  # JAX builds a placed fill from its shards: strong
        x = _jnp.asarray(x, dtype=x.dtype)
    placed: Array = device_put(x, device)
    return placed


def _split(x: Any, out_sharding: Any) -> Any:
    """An eager result made with `out_sharding`, laid out over the devices of its mesh (the
    context's, or the sharding's own concrete one), as JAX's eager call of the primitive
    places it; a staged one is typed already."""
    if out_sharding is None or isinstance(x, Tracer):
        return x
    mesh = getattr(out_sharding, "mesh", None)
    if not isinstance(mesh, Mesh):
        mesh = get_concrete_mesh()
    if mesh.empty:
        return x
    spec = out_sharding if isinstance(out_sharding, PartitionSpec) else out_sharding.spec
    padding = (None,) * (np.ndim(x) - len(spec))  # the type's spec names every axis
    spec = PartitionSpec(*spec.partitions, *padding, unreduced=spec.unreduced, reduced=spec.reduced)
    return device_put(x, NamedSharding(mesh, spec))


def _kept_as_is(x: Any, dtype: Any) -> bool:
    """Whether `array(x, dtype, copy=False)` hands a NumPy array over unconverted."""
    if not isinstance(x, np.ndarray):
        return False
    return dtype is None or _dtypes.canonicalize_dtype(dtype) == x.dtype


def _one_of(device: Any, out_sharding: Any) -> None:
    """JAX's `choose_device_or_out_sharding` check: a result is placed one way only.

    Raises:
        ValueError: both are given.
    """
    if device is not None and out_sharding is not None:
        raise ValueError(
            "Only one of `device` or `out_sharding` can be set. Got "
            f"device={device!r} and out_sharding={out_sharding!r}"
        )


def zeros(
    shape: Any, dtype: DTypeLike | None = None, *, device: Any = None, out_sharding: Any = None
) -> Array:
    """An array of `shape` filled with zeros, committed to `device` or split as
    `out_sharding` (a `NamedSharding`, or a spec over the mesh in context) if given."""
    _one_of(device, out_sharding)
    made = _jnp.zeros(shape, dtype, out_sharding=out_sharding)
    return _placed(_split(made, out_sharding), device)


def ones(
    shape: Any, dtype: DTypeLike | None = None, *, device: Any = None, out_sharding: Any = None
) -> Array:
    """An array of `shape` filled with ones, placed as `zeros`."""
    _one_of(device, out_sharding)
    made = _jnp.ones(shape, dtype, out_sharding=out_sharding)
    return _placed(_split(made, out_sharding), device)


def empty(
    shape: Any, dtype: DTypeLike | None = None, *, device: Any = None, out_sharding: Any = None
) -> Array:
    """As `zeros`."""
    _one_of(device, out_sharding)
    made = _jnp.empty(shape, dtype, out_sharding=out_sharding)
    return _placed(_split(made, out_sharding), device)


def full(
    shape: Any,
    fill_value: ArrayLike,
    dtype: DTypeLike | None = None,
    *,
    device: Any = None,
    out_sharding: Any = None,
) -> Array:
    """An array of `shape` filled with `fill_value`, placed as `zeros`."""
    _one_of(device, out_sharding)
    made = _jnp.full(shape, fill_value, dtype, out_sharding=out_sharding)
    return _placed(_split(made, out_sharding), device)


def zeros_like(
    a: ArrayLike,
    dtype: DTypeLike | None = None,
    shape: Any = None,
    *,
    device: Any = None,
    out_sharding: Any = None,
) -> Array:
    """Zeros shaped and typed as `a` unless given, placed as `zeros`."""
    _one_of(device, out_sharding)
    made = _jnp.zeros_like(a, dtype, shape, out_sharding=out_sharding)
    return _placed(_split(made, out_sharding), device)


def ones_like(
    a: ArrayLike,
    dtype: DTypeLike | None = None,
    shape: Any = None,
    *,
    device: Any = None,
    out_sharding: Any = None,
) -> Array:
    """Ones shaped and typed as `a` unless given, placed as `zeros`."""
    _one_of(device, out_sharding)
    made = _jnp.ones_like(a, dtype, shape, out_sharding=out_sharding)
    return _placed(_split(made, out_sharding), device)


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
    out_sharding: Any = None,
) -> Array:
    """`fill_value` shaped and typed as `a` unless given, placed as `zeros`."""
    _one_of(device, out_sharding)
    filled = _jnp.full_like(a, fill_value, dtype, shape, out_sharding=out_sharding)
    return _placed(_split(filled, out_sharding), device)


def arange(
    start: ArrayLike,
    stop: ArrayLike | None = None,
    step: ArrayLike | None = None,
    dtype: DTypeLike | None = None,
    *,
    device: Any = None,
    out_sharding: Any = None,
) -> Array:
    """`lamina_core.numpy.arange`, committed to `device` or split as `out_sharding`."""
    _one_of(device, out_sharding)
    made = _jnp.arange(start, stop, step, dtype, out_sharding=out_sharding)
    return _placed(_split(made, out_sharding), device)


def array(
    object: Any,
    dtype: DTypeLike | None = None,
    *,
    copy: bool = True,
    order: str | None = "K",
    ndmin: int = 0,
    device: Any = None,
    out_sharding: Any = None,
) -> Array:
    """`lamina_core.numpy.array`, committed to `device` or split as `out_sharding`."""
    _one_of(device, out_sharding)
    made = _jnp.array(object, dtype, copy=copy, order=order, ndmin=ndmin, out_sharding=out_sharding)
    if not copy and _kept_as_is(object, dtype):
        out_sharding = None  # JAX's no-copy path: a plain `device_put`, the sharding unused
    return _placed(_split(made, out_sharding), device, keep_weak=True)


def asarray(
    a: Any,
    dtype: DTypeLike | None = None,
    order: str | None = None,
    *,
    copy: bool | None = None,
    device: Any = None,
    out_sharding: Any = None,
) -> Array:
    """`lamina_core.numpy.asarray`, committed to `device` or split as `out_sharding`."""
    _one_of(device, out_sharding)
    made = _jnp.asarray(a, dtype, order, copy=copy, out_sharding=out_sharding)
    if not copy and _kept_as_is(a, dtype):
        out_sharding = None  # JAX's no-copy path: a plain `device_put`, the sharding unused
    return _placed(_split(made, out_sharding), device, keep_weak=True)


def astype(
    x: ArrayLike, dtype: DTypeLike | None, /, *, copy: bool = False, device: Any = None
) -> Array:
    """`x` converted to `dtype`, committed to `device` if given."""
    return _placed(_jnp.astype(x, dtype, copy=copy), device, keep_weak=True)


def eye(
    N: int,
    M: int | None = None,
    k: Any = 0,
    dtype: DTypeLike | None = None,
    *,
    device: Any = None,
) -> Array:
    """The identity-like matrix of `lamina_core.numpy.eye`, committed to `device` if given."""
    return _placed(_jnp.eye(N, M, k, dtype), device)


def linspace(
    start: ArrayLike,
    stop: ArrayLike,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype: DTypeLike | None = None,
    axis: int = 0,
    *,
    device: Any = None,
) -> Any:
    """`lamina_core.numpy.linspace`, its values committed to `device` if given."""
    out = _jnp.linspace(start, stop, num, endpoint, retstep, dtype, axis)
    if retstep:
        return _placed(out[0], device), out[1]
    return _placed(out, device)
