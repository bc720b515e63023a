"""The runtime bridge (see `_bridge`): devices, avals, transfers, buffers and shardings.

Host values become device arrays here (always copies), device arrays move between devices and
shardings, and Lamina's meshes and shardings are converted to and from jax's public types.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Final

import jax  # [public] devices, config, device_put, make_array_from_single_device_arrays
import jax.sharding  # [public] SingleDeviceSharding, NamedSharding, Mesh, PartitionSpec
import jaxlib._jax as _jax  # [private] batched_device_put, HostBufferSemantics
import numpy as np
from jax.core import ShapedArray as JaxShapedArray  # [public] the aval type jaxlib's handlers use

from lamina_core.ir import dtypes
from lamina_runtime._bridge import DeviceArray

_COPY_SEMANTICS: Final = _jax.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL  # [private]
_IN_PLACE_SEMANTICS: Final = _jax.HostBufferSemantics.ZERO_COPY  # [private]
_HOST_ALIGNMENT: Final = 64
"""Bytes: the CPU client uses host memory aligned this much in place under ZERO_COPY (less
aligned memory it copies)."""


# ---- devices ------------------------------------------------------------------------------


def devices(backend: str | None = None) -> list[Any]:
    """The devices of `backend` (default: JAX's default backend). [public]"""
    found = list(jax.devices(backend))
    if not _primed:
        _backend_started(found[0])
    return found


def set_num_cpu_devices(count: int) -> None:
    """How many CPU devices the backend makes when it starts (`jax_num_cpu_devices`); JAX
    raises its own RuntimeError once the backend has started with another count. [public]"""
    jax.config.update("jax_num_cpu_devices", count)  # type: ignore[no-untyped-call]


def local_devices(backend: str | None = None) -> list[Any]:
    found = list(jax.local_devices(backend=backend))  # [public]
    if not _primed:
        _backend_started(found[0])
    return found


def live_arrays(platform: str | None = None) -> list[Any]:
    """Every device array alive on `platform`'s backend (default: the default one). [public]"""
    return list(jax.live_arrays(platform))  # type: ignore[no-untyped-call]  # not annotated


@functools.cache
def first_local_device() -> Any:
    """This process's first device: the default one unless `choose_default_device` says."""
    return local_devices()[0]  # this process's first (all of them, alone)


_default_choosers: list[Callable[[], Any]] = []
"""Each says which device is the default here and now, or None (`jax_default_device`)."""


def choose_default_device(chooser: Callable[[], Any]) -> None:
    """Let `chooser` name the default device first (None from it: the next one decides)."""
    _default_choosers.append(chooser)


def default_device() -> Any:
    """The device values and programs go to unless told otherwise."""
    for chooser in _default_choosers:
        chosen = chooser()
        if chosen is not None:
            return chosen
    return first_local_device()


def set_jax_option(name: str, value: Any) -> None:
    """Set real JAX's option `name` for the process, where jaxlib or JAX's backend start reads
    it (transfer guards, platforms). [public] `jax.config.update`"""
    jax.config.update(name, value)  # type: ignore[no-untyped-call]


def jax_option_scope(name: str, value: Any) -> AbstractContextManager[Any]:
    """Real JAX's thread-local scope of option `name` (`jax.transfer_guard_host_to_device(v)`),
    which sets jaxlib's guard state while it is open. [public]"""
    scope: AbstractContextManager[Any] = getattr(jax, name.removeprefix("jax_"))(value)
    return scope


@contextlib.contextmanager
def explicit_transfer(to_device: bool) -> Iterator[None]:
    """Mark the transfers inside as ones the user asked for (`device_put`, `device_get`), which
    jaxlib's "disallow" transfer guards let through. [private] `guard_lib.thread_local_state`"""
    state = _jax.guard_lib.thread_local_state()
    attribute = "explicit_device_put" if to_device else "explicit_device_get"
    previous = getattr(state, attribute)
    setattr(state, attribute, True)
    try:
        yield
    finally:
        setattr(state, attribute, previous)


@functools.cache
def single_device_sharding(device: Any) -> Any:
    return jax.sharding.SingleDeviceSharding(device)  # [public]


# ---- avals --------------------------------------------------------------------------------


@functools.lru_cache(maxsize=8192)
def jax_aval(shape: tuple[int, ...], dtype: np.dtype, weak_type: bool) -> Any:
    """jax's aval for a shape and dtype: interned, since jaxlib compares them often. An
    extended dtype's (keys') is its physical array's: that is what the device holds."""
    ext = dtypes.extended_dtype_of(dtype)
    if ext is not None:
        return jax_aval((*shape, *ext.physical_shape), ext.physical_dtype, False)
    return JaxShapedArray(shape, dtype, weak_type)


_primed = False
_real_jax_view: Callable[[], AbstractContextManager[object]] = contextlib.nullcontext


def set_real_jax_view(view: Callable[[], AbstractContextManager[object]] | None) -> None:
    """How to put real JAX's modules back under their names for a moment: an alias of `jax`
    (`lamina.as_jax`) installs one while it is on (None: no alias). See `_backend_started`."""
    global _real_jax_view
    _real_jax_view = view or contextlib.nullcontext


def _backend_started(device: Any) -> None:
    """The bridge hands out its first device: make jaxlib's C++ import, now, the real JAX
    module it then keeps in a static for good: the aval type (`jax.core.ShapedArray`) of the
    arrays it makes itself (the shards of an array, a fully replicated shard). Were that look-up
    left to the first such array, under an alias making `jax.core` mean something else it would
    fail, and jaxlib would make arrays without avals from then on. Not earlier than the backend
    start: any client made earlier would fix the XLA flags (the device count) the program may
    still set. [private] `_fully_replicated_shard`
    """
    global _primed
    if _primed:
        return
    scalar = np.zeros((), np.float32)
    sharding = jax.sharding.SingleDeviceSharding(device)
    with _real_jax_view():
        array = _jax.batched_device_put(
            jax_aval((), scalar.dtype, False), sharding, [scalar], [device], True, False,
            _COPY_SEMANTICS, True,
        )  # fmt: skip
        aval = array._fully_replicated_shard().aval  # MakeFromSingleDeviceArray: the static
    if type(aval) is not JaxShapedArray:
        raise RuntimeError(f"jaxlib made an array whose aval is {aval!r}, not JAX's ShapedArray")
    _primed = True


def started_backends() -> dict[str, Any]:
    """The backend clients started so far, by platform, starting none: none until the bridge
    hands out its first device (JAX starts every backend at once then); after it, the default
    backend's client and the CPU one. (After `clear_backends` a read starts them anew.) [public]
    """
    if not _primed:
        return {}
    started = {}
    for platform in (None, "cpu"):
        try:
            client = jax.devices(platform)[0].client
        except RuntimeError:  # no CPU backend (`jax_platforms` without it)
            continue
        started[client.platform] = client
    return started


# ---- transfers ----------------------------------------------------------------------------


def device_put(value: Any, shape: tuple[int, ...], dtype: np.dtype, weak_type: bool,
               device: Any | None = None) -> Any:  # fmt: skip
    """A host value (NumPy array or scalar, Python scalar) as a device array; always a copy.

    The value is converted to `dtype` on the host first, so jaxlib never narrows it on its own
    (x64 is then always "on" for the transfer: the dtype is already Lamina's decision).
    """
    device = device or default_device()
    if dtype == dtypes.float0:  # no data: its physical form, as JAX's, is an array of False
        value, dtype = np.zeros(shape, np.bool_), np.dtype(np.bool_)
    ext = dtypes.extended_dtype_of(dtype)
    if ext is not None:  # host key arrays are structured arrays over their physical data
        host = np.ascontiguousarray(value, dtype=dtype).view(ext.physical_dtype)
        shape, dtype = (*shape, *ext.physical_shape), ext.physical_dtype
        host = host.reshape(shape)
    else:
        host = np.asarray(value, dtype=dtype)
    aval = jax_aval(shape, dtype, weak_type)
    return _jax.batched_device_put(  # [private]
        aval, single_device_sharding(device), [host], [device], True, False, _COPY_SEMANTICS, True
    )


def to_device(array: Any, device: Any) -> Any:
    """`array` (a device array) on `device`: the same object if already there. [public]"""
    return jax.device_put(array, device)


def is_device_array(x: Any) -> bool:
    return type(x) is DeviceArray


def reshard(array: Any, sharding: Any) -> Any:
    """Move `array` to `sharding`, for inputs that arrive somewhere else. [public]"""
    return jax.device_put(array, sharding)


# ---- meshes and shardings: Lamina's (lamina_core.ir._mesh) to and from jax's public types ------


@functools.lru_cache(maxsize=256)
def named_sharding(devices: tuple[Any, ...], mesh_shape: tuple[int, ...],
                   axis_names: tuple[Any, ...], partitions: tuple[Any, ...],
                   axis_types: tuple[str, ...]) -> Any:  # fmt: skip
    """jax's NamedSharding of the mesh of `devices` (in mesh order) split as `partitions`, its
    axes of the types named (`"Auto"`, `"Explicit"`, `"Manual"`)."""
    types = tuple(getattr(jax.sharding.AxisType, t) for t in axis_types)  # [public]
    grid = np.array(devices, dtype=object).reshape(mesh_shape)
    mesh = jax.sharding.Mesh(grid, axis_names, axis_types=types)
    spec = jax.sharding.PartitionSpec(*partitions)  # type: ignore[no-untyped-call]  # [public]
    return jax.sharding.NamedSharding(mesh, spec)


ShardingParts = tuple[
    tuple[Any, ...], tuple[int, ...], tuple[Any, ...], tuple[Any, ...], tuple[str, ...]
]
"""A jax sharding as plain data: (devices in mesh order, mesh shape, axis names, spec entries,
axis type names); a single device's has mesh shape `()`."""


def sharding_parts(sharding: Any) -> ShardingParts:
    """What a jax sharding (of an array jaxlib or JAX made) is, as plain data. [public]"""
    if isinstance(sharding, jax.sharding.NamedSharding):
        mesh = sharding.mesh
        return (tuple(mesh.devices.flat), tuple(mesh.devices.shape), tuple(mesh.axis_names),
                tuple(sharding.spec), tuple(t.name for t in mesh.axis_types))  # fmt: skip
    if isinstance(sharding, jax.sharding.SingleDeviceSharding):
        return (tuple(sharding.device_set), (), (), (), ())
    raise TypeError(f"Lamina cannot describe the sharding {sharding!r}")


def is_single_device(array: Any) -> bool:
    return type(array.sharding) is jax.sharding.SingleDeviceSharding  # [public]


def shards(array: Any) -> list[tuple[Any, tuple[slice, ...], Any]]:
    """(device, index, single-device array) of each addressable shard of `array`. [public]"""
    return [(s.device, s.index, s.data) for s in array.addressable_shards]


def _private_copy(piece: np.ndarray) -> np.ndarray:
    """A C-ordered copy of `piece` that nothing else references, aligned for the CPU client to
    use it in place."""
    if piece.nbytes == 0:
        return np.array(piece, order="C")
    raw = np.empty(piece.nbytes + _HOST_ALIGNMENT, np.uint8)
    start = -raw.ctypes.data % _HOST_ALIGNMENT
    copy = raw[start : start + piece.nbytes].view(piece.dtype).reshape(piece.shape)
    np.copyto(copy, piece)
    return copy


def device_put_sharded(value: Any, shape: tuple[int, ...], dtype: np.dtype, weak_type: bool,
                       sharding: Any) -> Any:  # fmt: skip
    """A host value as a device array placed as `sharding` (a jax sharding), converted to
    `dtype` first; each process puts its own pieces of the same value. [private]

    Each distinct piece is copied once, to host memory of Lamina's own that every device
    holding that piece uses in place (the CPU client's ZERO_COPY; other clients copy it), so
    the devices of a replicated array share one buffer, as they share the caller's NumPy array
    under `jax.device_put`: a copy per device made an 8-device step reading replicated
    parameters ~6% slower. The caller's array is never aliased. XLA never writes such a buffer:
    donating it makes a new one (measured, jaxlib 0.10.2).
    """
    host = np.asarray(value, dtype=dtype)
    index_map = sharding.addressable_devices_indices_map(shape)  # [public]
    copies: dict[tuple[Any, ...], np.ndarray] = {}
    pieces = []
    for index in index_map.values():
        key = tuple((i.start, i.stop, i.step) if isinstance(i, slice) else i for i in index)
        piece = copies.get(key)
        if piece is None:
            piece = copies[key] = _private_copy(host[index])
        pieces.append(piece)
    aval = jax_aval(shape, dtype, weak_type)
    return _jax.batched_device_put(
        aval, sharding, pieces, list(index_map), True, False, _IN_PLACE_SEMANTICS, True
    )


def is_equivalent(current: Any, target: Any, ndim: int) -> bool:
    """Whether an array placed as `current` may be passed where `target` is expected."""
    return current is target or current == target or current.is_equivalent_to(target, ndim)


def assemble(shape: tuple[int, ...], sharding: Any, arrays: Sequence[Any]) -> Any:
    """One global array of single-device `arrays`, one per device of `sharding`. [public]"""
    return jax.make_array_from_single_device_arrays(shape, sharding, list(arrays))
