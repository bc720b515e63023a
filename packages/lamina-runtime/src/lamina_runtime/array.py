"""`Array`: Lamina's device array.

An `Array` holds one jaxlib device array (a `jax.Array`) and Lamina's abstract value for it,
which adds the weak type. `Array(jax_array)` and `.jax_array` cross between Lamina and JAX with
no copy. Operators and methods go through Lamina's NumPy frontend, so `a + b` on arrays runs
the same primitives as on tracers, eagerly on XLA.

Values are put on devices here too: as device arrays for an executable's inputs (`to_buffer`
on one device, `place` as a sharding), and as `Array`s for `device_put` (`put`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar, Final

import numpy as np

from lamina_core import dtypes, lax
from lamina_core.ir import NamedSharding, ShapedArray, explicit_spec
from lamina_core.trace import (
    ArrayMethods,
    Tracer,
    register_operand_type,
    register_value_type,
    typeof,
)
from lamina_runtime import _bridge, _bridge_devices, _bridge_dispatch, _bridge_executables
from lamina_runtime import sharding as shardings

_CANONICAL_AVALS: dict[ShapedArray, ShapedArray] = {}
"""One aval object per distinct type (a cache, not state): eager dispatch keys its programs on
the identity of its arguments' avals, so arrays of one type made anew (constants materialized
at top level, device_put) must share their aval object, or each would add a key."""


def canonical_aval(aval: ShapedArray) -> ShapedArray:
    return _CANONICAL_AVALS.setdefault(aval, aval)


class Shard:
    """One device's piece of an array (`Array.addressable_shards`)."""

    __slots__ = ("data", "device", "index")

    def __init__(self, device: Any, index: tuple[slice, ...], data: Array) -> None:
        self.device, self.index, self.data = device, index, data

    def __repr__(self) -> str:
        return f"Shard(device={self.device!r}, index={self.index}, data={self.data!r})"


class _ArrayMeta(type):
    """`isinstance(x, Array)` holds for tracers of arrays too, as for `jax.Array` (whose C++
    metaclass asks the tracer the same question), so code that filters leaves on it works
    under `jit`, `grad` and `vmap`; tracers of Refs and hi types are not arrays.

    Python answers `isinstance(array, Array)` for an exact `Array` before asking the
    metaclass, so the runtime's own checks (`type(x) is Array`) pay nothing for this.
    """

    def __instancecheck__(cls, instance: Any) -> bool:
        if type.__instancecheck__(cls, instance):
            return True
        return (
            cls is Array and isinstance(instance, Tracer) and isinstance(instance.aval, ShapedArray)
        )


class Array(ArrayMethods, metaclass=_ArrayMeta):
    """A device array. Identity is intended: it owns (a reference to) one device buffer."""

    __slots__ = ("__weakref__", "_buf", "_dispatch_tag", "aval")
    _buf: Any
    _dispatch_tag: object
    """What C++ dispatch keys this array on besides its device array (`dispatch_tag`)."""
    aval: ShapedArray
    jax_name: ClassVar[str] = "ArrayImpl"  # the name JAX's errors give the type

    def __init__(self, buf: Any, aval: ShapedArray | None = None) -> None:
        if type(buf) is Array:
            buf, aval = buf._buf, aval or buf.aval
        if not _bridge_devices.is_device_array(buf):
            raise TypeError(
                f"Array wraps a device array (jax.Array); got {type(buf).__name__}. "
                f"Use lamina.numpy.asarray or lamina.device_put for host values."
            )
        self._buf = buf
        self.aval = aval = canonical_aval(
            aval
            or ShapedArray(
                tuple(buf.shape), np.dtype(buf.dtype), bool(getattr(buf, "weak_type", False))
            )
        )
        self._dispatch_tag = dispatch_tag(aval)

    @classmethod
    def _wrap(cls, buf: Any, aval: ShapedArray) -> Array:
        """An `Array` around a buffer the runtime just made, without the checks (hot path)."""
        array = object.__new__(cls)
        array._buf = buf
        array.aval = aval
        array._dispatch_tag = (
            dtypes.extended_dtype_of(aval.dtype) if type(aval.dtype) is _VOID else None
        )
        return array

    # ---- type -------------------------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return len(self.aval.shape)

    @property
    def size(self) -> int:
        return self.aval.size

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type

    @property
    def jax_array(self) -> Any:
        """The underlying `jax.Array` (no copy)."""
        return self._buf

    # ---- device -----------------------------------------------------------------------------

    @property
    def sharding(self) -> Any:
        """Where it lives: a `NamedSharding` over a mesh, or a `SingleDeviceSharding`."""
        return shardings.of_jax(self._buf.sharding)

    @property
    def addressable_shards(self) -> list[Shard]:
        """Each device's piece: its device, index into the array, and data."""
        return [Shard(d, i, Array(b)) for d, i, b in _bridge_devices.shards(self._buf)]

    def addressable_data(self, index: int) -> Array:
        """The data of this process's `index`-th shard."""
        return self.addressable_shards[index].data

    def to_device(self, device: Any, *, stream: Any = None) -> Any:
        """A copy on `device` (a device or a sharding), as `device_put`."""
        if stream is not None:
            raise NotImplementedError("stream argument of array.to_device()")
        return put(self, placement_target(device))

    @property
    def is_fully_replicated(self) -> bool:
        return bool(self._buf.is_fully_replicated)

    @property
    def is_fully_addressable(self) -> bool:
        """Whether this process holds every shard (False for arrays over many processes)."""
        return bool(self._buf.is_fully_addressable)

    def devices(self) -> set[Any]:
        return set(self._buf.devices())

    @property
    def device(self) -> Any:
        return self._buf.device

    def block_until_ready(self) -> Array:
        self._buf.block_until_ready()
        return self

    def is_deleted(self) -> bool:
        return bool(self._buf.is_deleted())

    def delete(self) -> None:
        self._buf.delete()

    def unsafe_buffer_pointer(self) -> int:
        return int(self._buf.unsafe_buffer_pointer())

    def copy(self) -> Array:
        return Array(
            _bridge_devices.device_put(
                np.asarray(self._buf), self.shape, self.dtype, self.weak_type, self.device
            ),
            self.aval,
        )

    def copy_to_host_async(self) -> None:
        self._buf.copy_to_host_async()

    # ---- host conversions -----------------------------------------------------------------

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        host = _host(self)
        if dtype is not None and np.dtype(dtype) != host.dtype:
            return host.astype(dtype)
        return host.copy() if copy else host

    def __jax_array__(self) -> Any:
        return self._buf

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self._buf.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        device: tuple[int, int] = self._buf.__dlpack_device__()
        return device

    def item(self, *args: Any) -> Any:
        return np.asarray(self).item(*args)

    def tolist(self) -> Any:
        return np.asarray(self).tolist()

    def _scalar(self) -> np.ndarray:
        if self.ndim:
            raise TypeError(
                f"Only scalar arrays can be converted to Python scalars; got arr.ndim={self.ndim}"
            )
        return np.asarray(self)

    def __bool__(self) -> bool:
        # NumPy's rule, as JAX's: any one element has a truth value, whatever the rank.
        if self.size == 0:
            raise ValueError(
                "The truth value of an empty array is ambiguous. Use `array.size > 0` to check "
                "that an array is not empty."
            )
        if self.size > 1:
            raise ValueError(
                "The truth value of an array with more than one element is ambiguous. Use "
                "a.any() or a.all()"
            )
        return bool(np.asarray(self))

    def __float__(self) -> float:
        return float(self._scalar())

    def __int__(self) -> int:
        return int(self._scalar())

    def __complex__(self) -> complex:
        return complex(self._scalar())

    def __index__(self) -> int:
        if self.ndim or self.dtype.kind not in "iu":
            raise TypeError("Only integer scalar arrays can be converted to a scalar index.")
        return int(np.asarray(self))

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self) -> Iterator[Any]:
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        if self.sharding.num_devices == 1 or self.is_fully_replicated:
            # As JAX: chunks of 100 rows, each one `unstack`, so a long array costs a few
            # programs (compiled once per chunk shape), not one indexing program per row.
            return (row for chunk in self._chunks(100) for row in lax.unstack(chunk))
        return (self[i] for i in range(self.shape[0]))

    def _chunks(self, size: int) -> Iterator[Any]:
        if size > self.shape[0]:
            yield self
            return
        count, tail = divmod(self.shape[0], size)
        for i in range(count):
            yield lax.dynamic_slice_in_dim(self, i * size, size)
        if tail:
            yield lax.dynamic_slice_in_dim(self, count * size, tail)

    __hash__ = None  # type: ignore[assignment]  # unhashable, with Python's message, as JAX's

    def __reduce__(self) -> tuple[Any, ...]:
        return (_unpickle, (np.asarray(self), self.weak_type))

    def __format__(self, spec: str) -> str:
        # As JAX's: a scalar formats as its NumPy scalar (`f"{x:.3f}"`, and `f"{x}"` as
        # `float32(0.1)` prints), an array as NumPy's array (which refuses a non-empty spec).
        host = np.asarray(self)
        return format(host[()] if self.ndim == 0 else host, spec)

    def __str__(self) -> str:
        if dtypes.extended_dtype_of(self.dtype) is not None:
            return repr(self)  # as JAX shows key arrays
        return str(np.asarray(self))

    def __repr__(self) -> str:
        if dtypes.extended_dtype_of(self.dtype) is not None:
            # A key array shows its type and the data it overlays, as JAX's does.
            name = dtypes.dtype_name(self.dtype)
            return f"Array({self.shape}, dtype={name}) overlaying:\n{np.asarray(self._buf)}"
        prefix = "Array("
        dtype = f"dtype={self.dtype.name}" + (", weak_type=True" if self.weak_type else "")
        width = int(np.get_printoptions()["linewidth"])
        if self.size == 0:
            body = f"[], shape={self.shape}"
        else:
            body = np.array2string(
                np.asarray(self), prefix=prefix, suffix=",", separator=", ", max_line_width=width
            )
        last_line = len(body) - body.rfind("\n") + 1
        # JAX's layout, kept byte for byte: a dtype that does not fit gets prefix-wide padding.
        sep = " " * len(prefix) if last_line + len(dtype) + 2 > width else " "
        return f"{prefix}{body},{sep}{dtype})"


def _unpickle(host: np.ndarray, weak_type: bool) -> Array:
    return Array(
        _bridge_devices.device_put(host, host.shape, host.dtype, weak_type),
        ShapedArray(host.shape, host.dtype, weak_type),
    )


def _host(array: Array) -> np.ndarray:
    """The host copy of an array; a key array's as a structured array over its data."""
    try:
        host = np.asarray(array._buf)
    except RuntimeError:
        # jaxlib's "deleted" error: say so if a failed call consumed the buffer.
        deleted = _bridge_executables.deleted_argument([array._buf])
        if deleted is None:
            raise
        raise deleted from deleted.__cause__
    if dtypes.extended_dtype_of(array.aval.dtype) is None:
        return host
    return np.ascontiguousarray(host).view(array.aval.dtype).reshape(array.aval.shape)


def _aval_of_device_array(x: Any) -> ShapedArray:
    return ShapedArray(tuple(x.shape), np.dtype(x.dtype), bool(getattr(x.aval, "weak_type", False)))


register_value_type(Array, aval=lambda a: a.aval, to_numpy=_host)
register_value_type(_bridge.DeviceArray, aval=_aval_of_device_array, to_numpy=np.asarray)
register_operand_type(_bridge.DeviceArray)  # an array operators take, as the functions do


_VOID: Final = np.dtypes.VoidDType
"""The type of the NumPy dtypes extended dtypes stand for: a cheap first test."""


def dispatch_tag(aval: ShapedArray) -> object:
    """What C++ dispatch keys an array of type `aval` on besides its device array: its
    extended dtype (a PRNG key array's device array is its raw `uint32` data, which a `uint32`
    array may equal in shape), or None."""
    return dtypes.extended_dtype_of(aval.dtype) if type(aval.dtype) is _VOID else None


def _from_result(aval: ShapedArray, children: tuple[Any]) -> Array:
    # Called by C++ jit dispatch for every output: one Python call, no checks.
    array = _new_array(Array)
    array._buf = children[0]
    array.aval = aval
    array._dispatch_tag = None
    return array


def _from_tagged_result(aval: ShapedArray, children: tuple[Any]) -> Array:
    array = _new_array(Array)
    array._buf = children[0]
    array.aval = aval
    array._dispatch_tag = dispatch_tag(aval)
    return array


_new_array = object.__new__
_bridge_dispatch.register_array_type(
    Array, "_buf", "_dispatch_tag", _from_result, _from_tagged_result
)


# ---- values placed on devices ------------------------------------------------------------
#
# Here, not beside `device_put` in `api`: `Array.to_device` is a transfer too, and transfers
# make arrays, so the two build on each other.


def to_buffer(x: Any, aval: ShapedArray, device: Any) -> Any:
    """`x` as a device array of type `aval` on `device`: a copy for host values, moved if needed."""
    if type(x) is Array:
        buf = x._buf
    elif _bridge_devices.is_device_array(x):
        buf = x
    else:
        return _bridge_devices.device_put(x, aval.shape, aval.dtype, aval.weak_type, device)
    sharding = _bridge_devices.single_device_sharding(device)
    current = buf.sharding
    if current is not sharding and current != sharding:
        _check_local(buf, aval, sharding)
        # Never pass a mis-placed buffer to XLA: on multi-device executables that crashes.
        buf = _bridge_devices.reshard(buf, sharding)
    return buf


def place(x: Any, aval: ShapedArray, sharding: Any) -> Any:
    """`x` as a device array of type `aval` placed as `sharding` (a jax sharding, from
    `sharding.to_jax`): host values copied piece by piece, misplaced arrays moved."""
    if type(x) is Array:
        buf = x._buf
    elif _bridge_devices.is_device_array(x):
        buf = x
    else:
        return _bridge_devices.device_put_sharded(
            x, aval.shape, aval.dtype, aval.weak_type, sharding
        )
    if not _bridge_devices.is_equivalent(buf.sharding, sharding, len(aval.shape)):
        # Never pass a mis-placed buffer to XLA: on multi-device executables that crashes.
        _check_local(buf, aval, sharding)
        if not sharding.is_fully_addressable:  # whole here (as in every process): place ours
            host = np.asarray(buf)
            weak = aval.weak_type
            return _bridge_devices.device_put_sharded(host, host.shape, host.dtype, weak, sharding)
        buf = _bridge_devices.reshard(buf, sharding)
    return buf


def _check_local(buf: Any, aval: ShapedArray, sharding: Any) -> None:
    """Refuse to move an array held by several processes: Lamina moves data only within one.

    Raises:
        ValueError: `buf` spans other processes' devices and is not placed as `sharding`.
    """
    if buf.is_fully_addressable:
        return
    raise ValueError(
        f"an argument of type {aval.str_short(True)} is placed as "
        f"{shardings.of_jax(buf.sharding)}, over the devices of several processes, but the "
        f"program takes it as {shardings.of_jax(sharding)}; Lamina does not move data between "
        "processes: place it as the program expects (`make_array_from_callback` with that "
        "sharding, or `jit(..., in_shardings=...)` matching it)"
    )


def placement_target(device: Any) -> Any:
    """Where `device_put(x, device)` puts its values: a device (default: the default device),
    or a `NamedSharding` when `device` is one (or a bare `P` over the mesh in context)."""
    if device is not None and not isinstance(device, _bridge.Device):
        target_sharding = shardings.resolve(device)
        if not isinstance(target_sharding, shardings.SingleDeviceSharding):
            return target_sharding
        device = next(iter(target_sharding.device_set))
    return device or _bridge_devices.default_device()


def put(leaf: Any, target: Any) -> Array:
    """One concrete value (host or device) as an `Array` on `target`, a `placement_target`."""
    if isinstance(target, NamedSharding):
        return _put_sharded(leaf, target)
    aval = typeof(leaf)
    if not isinstance(aval, ShapedArray):
        raise TypeError(f"device_put: cannot place a value of type {aval.str_short(True)}")
    if type(leaf) is Array:
        return Array(_bridge_devices.to_device(leaf.jax_array, target), aval)
    if _bridge_devices.is_device_array(leaf):
        return Array(_bridge_devices.to_device(leaf, target), aval)
    return Array(
        _bridge_devices.device_put(leaf, aval.shape, aval.dtype, aval.weak_type, target), aval
    )


def _put_sharded(leaf: Any, sharding: NamedSharding) -> Array:
    aval = typeof(leaf)
    if not isinstance(aval, ShapedArray):
        raise TypeError(f"device_put: cannot place a value of type {aval.str_short(True)}")
    shardings.check_divides(sharding, aval.shape)
    # Its type carries the mesh, as JAX's does: what is traced from it is laid out over it.
    mesh = sharding.mesh.abstract_mesh
    # Over Explicit axes the type carries the spec too (f32[8@data,3]).
    laid_out = aval.update(mesh=mesh, spec=explicit_spec(mesh, sharding.spec, aval.ndim))
    return Array(place(leaf, aval, shardings.to_jax(sharding)), laid_out)
