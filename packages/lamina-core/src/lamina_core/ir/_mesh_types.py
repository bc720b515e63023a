"""Device meshes and named shardings as types, as JAX's: `Mesh`, `AbstractMesh`, `AxisType`,
`NamedSharding`.

A mesh names the axes of an n-dimensional array of devices. Core holds devices as opaque
objects (the runtime's); it needs only their ids and kinds. An `AbstractMesh` is a mesh's
shape and names without devices: what tracing and lowering depend on. Which mesh is in
context is `_mesh`'s concern; only the stack that JAX's legacy `with mesh:` pushes on is
defined here, beside `Mesh`.
"""

from __future__ import annotations

import contextvars
import enum
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, Final

import numpy as np

from lamina_core.ir._partition_spec import PartitionSpec, entry_axes, split_counts


class AxisType(enum.Enum):
    """How a mesh axis is partitioned: by the compiler (`Auto`), in the types of values
    (`Explicit`), or by hand inside `shard_map` (`Manual`)."""

    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self) -> str:
        return self.name


def _axis_names(names: Any) -> tuple[Any, ...]:
    return (names,) if isinstance(names, str) else tuple(names)


def _axis_types(names: tuple[Any, ...], types: Any, api: str) -> tuple[AxisType, ...]:
    if types is None:
        return (AxisType.Auto,) * len(names)
    if not isinstance(types, tuple):
        types = (types,)
    if not all(isinstance(t, AxisType) for t in types):
        raise TypeError(
            f"axis_types passed to {api} must be of type `jax.sharding.AxisType`. Got {types} "
            f"of type {tuple(type(t) for t in types)}"
        )
    if len(types) != len(names):
        raise ValueError(
            "Number of axis names should match the number of axis_types. Got "
            f"axis_names={names} and axis_types={types}"
        )
    return tuple(types)


class _MeshShape:
    """What a mesh and an abstract mesh share: axis names, sizes and types."""

    __slots__ = ()
    axis_names: tuple[Any, ...]
    axis_sizes: tuple[int, ...]
    axis_types: tuple[AxisType, ...]

    @property
    def shape(self) -> dict[Any, int]:
        return dict(zip(self.axis_names, self.axis_sizes, strict=True))

    @property
    def shape_tuple(self) -> tuple[tuple[Any, int], ...]:
        return tuple(zip(self.axis_names, self.axis_sizes, strict=True))

    @property
    def size(self) -> int:
        return math.prod(self.axis_sizes)

    @property
    def empty(self) -> bool:
        return not self.axis_names

    @property
    def _name_to_type(self) -> dict[Any, AxisType]:
        return dict(zip(self.axis_names, self.axis_types, strict=True))

    def _axes_of(self, kind: AxisType) -> tuple[Any, ...]:
        return tuple(n for n, t in zip(self.axis_names, self.axis_types, strict=True) if t is kind)

    @property
    def manual_axes(self) -> tuple[Any, ...]:
        return self._axes_of(AxisType.Manual)

    @property
    def explicit_axes(self) -> tuple[Any, ...]:
        return self._axes_of(AxisType.Explicit)

    @property
    def auto_axes(self) -> tuple[Any, ...]:
        return self._axes_of(AxisType.Auto)

    def _shape_repr(self) -> str:
        return ", ".join(f"{n!r}: {s}" for n, s in self.shape_tuple)


class AbstractMesh(_MeshShape):
    """A mesh's axis names, sizes and types, and the kind of its devices; no devices."""

    __slots__ = (
        "axis_names",
        "axis_sizes",
        "axis_types",
        "device_kind",
        "has_explicit",
        "num_cores",
        "platform",
    )
    has_explicit: bool
    """Whether some axis is Explicit (then array types over it carry their specs)."""

    def __init__(
        self,
        axis_sizes: tuple[int, ...],
        axis_names: tuple[Any, ...],
        axis_types: AxisType | tuple[AxisType, ...] | None = None,
        *,
        device_kind: str | None = None,
        num_cores: int | None = None,
        platform: str | None = None,
    ) -> None:
        names = _axis_names(axis_names)
        sizes = tuple(int(s) for s in axis_sizes)
        if len(names) != len(sizes):
            raise ValueError(
                f"AbstractMesh: {len(sizes)} axis sizes {sizes} for {len(names)} axis names {names}"
            )
        self.axis_names = names
        self.axis_sizes = sizes
        self.axis_types = _axis_types(names, axis_types, "AbstractMesh")
        self.has_explicit = AxisType.Explicit in self.axis_types
        self.device_kind, self.num_cores, self.platform = device_kind, num_cores, platform

    def _key(self) -> tuple[Any, ...]:
        return (
            self.axis_names,
            self.axis_sizes,
            self.axis_types,
            self.device_kind,
            self.num_cores,
            self.platform,
        )

    def __eq__(self, other: object) -> bool:
        return type(other) is AbstractMesh and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        shape = self._shape_repr() if self.axis_names else "()"
        device = (
            ""
            if self.device_kind is None and self.platform is None
            else f", device_kind={self.device_kind}, num_cores={self.num_cores}, "
            f"platform={self.platform}"
        )
        return f"AbstractMesh({shape}, axis_types={self.axis_types}{device})"

    @property
    def abstract_mesh(self) -> AbstractMesh:
        return self

    def update_axis_types(self, types: Mapping[Any, AxisType]) -> AbstractMesh:
        return AbstractMesh(
            self.axis_sizes,
            self.axis_names,
            tuple(types.get(n, t) for n, t in zip(self.axis_names, self.axis_types, strict=True)),
            device_kind=self.device_kind,
            num_cores=self.num_cores,
            platform=self.platform,
        )


class Mesh(_MeshShape):
    """An array of devices with named axes: `Mesh(devices, axis_names, axis_types=None)`.

    `devices` is a NumPy array (or nested sequence) of devices, one array axis per name.
    """

    __slots__ = ("_abstract", "axis_names", "axis_sizes", "axis_types", "devices")
    devices: np.ndarray

    def __init__(
        self,
        devices: Any,
        axis_names: Any,
        axis_types: AxisType | tuple[AxisType, ...] | None = None,
    ) -> None:
        if not isinstance(devices, np.ndarray):
            devices = np.array(devices, dtype=object)
        names = _axis_names(axis_names)
        if devices.ndim != len(names):
            raise ValueError(
                f"Mesh requires the ndim of its first argument (`devices`) to equal the length "
                f"of its second argument (`axis_names`), but got devices.ndim == {devices.ndim} "
                f"and len(axis_names) == {len(names)}."
            )
        if len(set(names)) != len(names):
            raise ValueError(f"Mesh axis names must be unique, got {names}")
        ids = [d.id for d in devices.flat if d is not None]
        if len(set(ids)) != len(ids):
            raise ValueError(f"Mesh devices must be distinct, got device ids {ids}")
        devices = devices.copy()
        devices.flags.writeable = False
        self.devices = devices
        self.axis_names = names
        self.axis_sizes = tuple(devices.shape)
        self.axis_types = _axis_types(names, axis_types, "Mesh")
        self._abstract: AbstractMesh | None = None

    @property
    def has_explicit(self) -> bool:
        return AxisType.Explicit in self.axis_types

    @property
    def device_ids(self) -> np.ndarray:
        ids: np.ndarray = np.vectorize(lambda d: d.id, otypes=[int])(self.devices)
        return ids

    @property
    def devices_flat(self) -> tuple[Any, ...]:
        """The devices in mesh order: the SPMD partition order of programs on this mesh."""
        return tuple(self.devices.flat)

    @property
    def local_devices(self) -> list[Any]:
        """The devices of this process (all of them, unless several processes run)."""
        here = _process_index()
        return [d for d in self.devices.flat if _process_of(d) == here]

    def _key(self) -> tuple[Any, ...]:
        ids = tuple(d.id for d in self.devices.flat if d is not None)
        return (ids, self.axis_names, self.axis_sizes, self.axis_types)

    def __eq__(self, other: object) -> bool:
        return other is self or (type(other) is Mesh and self._key() == other._key())

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        if self.empty:
            return "Mesh()"
        return f"Mesh({self._shape_repr()}, axis_types={self.axis_types})"

    def __repr__(self) -> str:
        if self.empty:
            return "Mesh(axis_sizes=(), axis_names=())"
        return (
            f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names!r}, "
            f"axis_types={self.axis_types})"
        )

    @property
    def abstract_mesh(self) -> AbstractMesh:
        if self._abstract is None:
            first = self.devices.flat[0] if self.devices.size else None
            self._abstract = AbstractMesh(
                self.axis_sizes,
                self.axis_names,
                self.axis_types,
                device_kind=getattr(first, "device_kind", None),
                num_cores=getattr(first, "num_cores", None),
                platform=getattr(first, "platform", None),
            )
        return self._abstract

    def update_axis_types(self, types: Mapping[Any, AxisType]) -> Mesh:
        return Mesh(
            self.devices,
            self.axis_names,
            tuple(types.get(n, t) for n, t in zip(self.axis_names, self.axis_types, strict=True)),
        )

    # JAX's legacy form: `with mesh:` makes it the mesh in context.
    def __enter__(self) -> Mesh:
        _context_stack.set((*_context_stack.get(), self))
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        _context_stack.set(_context_stack.get()[:-1])


EMPTY_MESH: Final = Mesh(np.empty((), dtype=object), ())
EMPTY_ABSTRACT_MESH: Final = AbstractMesh((), ())


_context_stack: contextvars.ContextVar[tuple[Mesh, ...]] = contextvars.ContextVar(
    "lamina_mesh_context", default=()
)
"""The meshes `with mesh:` and `with set_mesh(mesh):` put in context, innermost last."""


def manual_mesh(mesh: Mesh | AbstractMesh, axes: Iterable[Any]) -> AbstractMesh:
    """`mesh`'s abstract mesh with `axes` made Manual: the mesh of a shard_map body's types."""
    return mesh.abstract_mesh.update_axis_types(dict.fromkeys(axes, AxisType.Manual))


# --- NamedSharding -------------------------------------------------------------------------------


class NamedSharding:
    """An array split over `mesh` as `spec` says: `NamedSharding(mesh, P('data', None))`."""

    __slots__ = ("memory_kind", "mesh", "spec")

    def __init__(
        self, mesh: Mesh | AbstractMesh, spec: PartitionSpec, *, memory_kind: str | None = None
    ) -> None:
        if not isinstance(mesh, (Mesh, AbstractMesh)):
            raise TypeError(
                f"mesh needs to be of type `Mesh` or `AbstractMesh`. Got {type(mesh).__name__}"
            )
        if not isinstance(spec, PartitionSpec):
            raise TypeError(
                "spec of NamedSharding must be an instance of `PartitionSpec`. Got "
                f"{type(spec).__name__}"
            )
        for entry in spec.partitions:
            for name in entry_axes(entry):
                if name not in mesh.axis_names:
                    raise ValueError(
                        f"Resource axis: {name} of {spec} is not found in mesh: "
                        f"{tuple(mesh.axis_names)}."
                    )
        self.mesh, self.spec, self.memory_kind = mesh, spec, memory_kind

    def __repr__(self) -> str:
        if isinstance(self.mesh, AbstractMesh) and self.memory_kind is None:
            return f"NamedSharding(mesh={self.mesh}, spec={self.spec})"
        return (
            f"NamedSharding(mesh={self.mesh}, spec={self.spec}, "
            f"memory_kind={self.memory_kind or 'device'})"
        )

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is NamedSharding
            and self.mesh == other.mesh
            and self.spec == other.spec
            and self.memory_kind == other.memory_kind
        )

    def __hash__(self) -> int:
        return hash((self.mesh, self.spec, self.memory_kind))

    @property
    def num_devices(self) -> int:
        return self.mesh.size

    @property
    def device_set(self) -> set[Any]:
        if not isinstance(self.mesh, Mesh):
            raise ValueError("an AbstractMesh has no devices")
        return set(self.mesh.devices.flat)

    def split_counts(self, ndim: int) -> tuple[int, ...]:
        """Into how many pieces each of `ndim` array axes is split."""
        return split_counts(self.spec, self.mesh.shape, ndim)

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        """The shape of each device's piece of an array of `global_shape`."""
        counts = self.split_counts(len(global_shape))
        for axis, (size, n) in enumerate(zip(global_shape, counts, strict=True)):
            if size % n:
                raise ValueError(
                    f"One of the array dimensions is not divisible by the number of devices it "
                    f"is sharded over: axis {axis} of size {size} over {n} devices "
                    f"(sharding {self}, shape {tuple(global_shape)})"
                )
        return tuple(s // n for s, n in zip(global_shape, counts, strict=True))

    @property
    def is_fully_replicated(self) -> bool:
        return all(
            self.mesh.shape[n] == 1 for entry in self.spec.partitions for n in entry_axes(entry)
        )

    def devices_indices_map(self, global_shape: Sequence[int]) -> dict[Any, tuple[slice, ...]]:
        """The piece of an array of `global_shape` each device holds, as JAX's: per axis a
        slice, `slice(None)` where the axis is whole."""
        mesh = self.mesh
        if not isinstance(mesh, Mesh):
            raise ValueError("an AbstractMesh has no devices")
        shard = self.shard_shape(global_shape)
        counts = self.split_counts(len(global_shape))
        parts = self.spec.partitions
        names = [entry_axes(parts[d]) if d < len(parts) else () for d in range(len(shard))]
        sizes = mesh.shape
        out: dict[Any, tuple[slice, ...]] = {}
        for coords in np.ndindex(*mesh.axis_sizes):
            at = dict(zip(mesh.axis_names, coords, strict=True))
            index = []
            for dim, axes in enumerate(names):
                if counts[dim] == 1:
                    index.append(slice(None))
                    continue
                piece = 0
                for name in axes:  # the first axis named is the most significant
                    piece = piece * sizes[name] + at[name]
                index.append(slice(piece * shard[dim], (piece + 1) * shard[dim]))
            out[mesh.devices[coords]] = tuple(index)
        return out

    def addressable_devices_indices_map(
        self, global_shape: Sequence[int]
    ) -> dict[Any, tuple[slice, ...]]:
        """`devices_indices_map` for this process's devices only."""
        here = _process_index()
        full = self.devices_indices_map(global_shape)
        return {d: index for d, index in full.items() if _process_of(d) == here}

    @property
    def addressable_devices(self) -> set[Any]:
        here = _process_index()
        return {d for d in self.device_set if _process_of(d) == here}

    @property
    def is_fully_addressable(self) -> bool:
        here = _process_index()
        return all(_process_of(d) == here for d in self.device_set)


def _single_process() -> int:
    return 0


_process_index: Callable[[], int] = _single_process
"""This process's index among the processes of a run; the runtime installs its own."""


def install_process_index(fn: Callable[[], int]) -> None:
    """Tell core which process this is (`Mesh.local_devices`, addressable devices)."""
    global _process_index
    _process_index = fn


def _process_of(device: Any) -> int:
    return int(getattr(device, "process_index", 0))


def spec_axis_names(spec: PartitionSpec) -> frozenset[Any]:
    """The mesh axes `spec` splits some array axis over."""
    return frozenset(n for entry in spec.partitions for n in entry_axes(entry))


__all__ = [
    "EMPTY_ABSTRACT_MESH",
    "EMPTY_MESH",
    "AbstractMesh",
    "AxisType",
    "Mesh",
    "NamedSharding",
    "install_process_index",
    "manual_mesh",
    "spec_axis_names",
]
