"""Device meshes and named shardings, as JAX's: `Mesh`, `AbstractMesh`, `AxisType`,
`NamedSharding`, and the mesh in context (`set_mesh`, `get_abstract_mesh`).

A mesh names the axes of an n-dimensional array of devices. Core holds devices as opaque
objects (the runtime's); it needs only their ids and kinds. An `AbstractMesh` is a mesh's
shape and names without devices: what tracing and lowering depend on.
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


# --- the mesh in context -----------------------------------------------------------------------

MESHES_SEEN: list[bool] = [False]
"""Whether any array type has had a mesh, or a mesh was put in context: until then staging
skips its sharding-in-types work."""
_global_mesh: list[Mesh | None] = [None]
"""The mesh `set_mesh(mesh)` set process-wide when called as a function."""
_context_stack: contextvars.ContextVar[tuple[Mesh, ...]] = contextvars.ContextVar(
    "lamina_mesh_context", default=()
)
_context_scopes: list[int] = [0]
"""How many `with set_mesh(...)` blocks are open in any thread (see `context_mesh`)."""


def manual_mesh(mesh: Mesh | AbstractMesh, axes: Iterable[Any]) -> AbstractMesh:
    """`mesh`'s abstract mesh with `axes` made Manual: the mesh of a shard_map body's types."""
    return mesh.abstract_mesh.update_axis_types(dict.fromkeys(axes, AxisType.Manual))


def get_concrete_mesh() -> Mesh:
    """The mesh in context (`set_mesh`, `with mesh:`), or the empty mesh."""
    stack = _context_stack.get()
    if stack:
        return stack[-1]
    return _global_mesh[0] or EMPTY_MESH


_abstract_stack: contextvars.ContextVar[tuple[AbstractMesh, ...]] = contextvars.ContextVar(
    "lamina_abstract_mesh_context", default=()
)
_abstract_scopes: list[int] = [0]
"""How many `use_abstract_mesh` blocks are open in any thread: while none is, a new array type
needs no context lookup to know it has no mesh."""


def get_abstract_mesh() -> AbstractMesh:
    """The abstract mesh in context (`use_abstract_mesh`, e.g. inside a `shard_map` body), else
    the abstract mesh of the mesh in context, or the empty abstract mesh."""
    if _abstract_scopes[0]:
        stack = _abstract_stack.get()
        if stack:
            return stack[-1]
    mesh = get_concrete_mesh()
    return EMPTY_ABSTRACT_MESH if mesh.empty else mesh.abstract_mesh


def concrete_context_mesh() -> Mesh | None:
    """The mesh `set_mesh` put in context (JAX's `ctx_mesh` of a `jit`), or None: a list read
    while there is none."""
    if not (_context_scopes[0] or _global_mesh[0] is not None):
        return None
    mesh = get_concrete_mesh()
    return None if mesh.empty else mesh


_context_listeners: list[Callable[[], None]] = []


def on_context_mesh_change(listener: Callable[[], None]) -> None:
    """Call `listener` whenever `set_mesh` changes the mesh in context (the runtime forgets
    the dispatch entries it made for calls under the previous one)."""
    _context_listeners.append(listener)


def _context_changed() -> None:
    for listener in _context_listeners:
        listener()


def context_mesh() -> AbstractMesh | None:
    """The mesh a primitive's result is laid out over when none of its operands has one
    (JAX's `get_cur_mesh_sharding`): the abstract mesh in context, or None for the empty mesh.
    A list read while no mesh is in context."""
    if not (_abstract_scopes[0] or _context_scopes[0] or _global_mesh[0] is not None):
        return None
    mesh = get_abstract_mesh()
    return None if mesh.empty else mesh


def aval_mesh() -> AbstractMesh | None:
    """The mesh a new array type takes when nothing says otherwise: the abstract mesh a
    `use_abstract_mesh` block put in context, or None (the empty mesh)."""
    if not _abstract_scopes[0]:
        return None
    stack = _abstract_stack.get()
    if not stack or stack[-1].empty:
        return None
    return stack[-1]


class use_abstract_mesh:  # lower case as JAX's: a context manager named like a function
    """`with use_abstract_mesh(mesh):` traces the block under `mesh`: the array types made in
    it carry `mesh` (as JAX traces a `shard_map` body under its manual mesh)."""

    __slots__ = ("_token", "mesh")

    def __init__(self, mesh: AbstractMesh) -> None:
        if not isinstance(mesh, AbstractMesh):
            raise ValueError(f"Expected mesh of type `AbstractMesh`. Got {type(mesh)}")
        self.mesh = mesh
        self._token: contextvars.Token[tuple[AbstractMesh, ...]] | None = None

    def __enter__(self) -> AbstractMesh:
        self._token = _abstract_stack.set((*_abstract_stack.get(), self.mesh))
        _abstract_scopes[0] += 1
        return self.mesh

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._token is not None
        _abstract_stack.reset(self._token)
        _abstract_scopes[0] -= 1


class set_mesh:  # lower case as JAX's: it is used as a function and as a context manager
    """Make `mesh` the mesh in context: process-wide when called, for a block with `with`."""

    __slots__ = ("_previous", "_token", "mesh")

    def __init__(self, mesh: Mesh) -> None:
        if not isinstance(mesh, Mesh):
            raise ValueError(f"Expected mesh of type `jax.sharding.Mesh`. Got {type(mesh)}")
        self.mesh = mesh
        self._previous = _global_mesh[0]
        _global_mesh[0] = mesh
        MESHES_SEEN[0] = True
        if mesh is not self._previous:
            _context_changed()
        self._token: contextvars.Token[tuple[Mesh, ...]] | None = None

    def __enter__(self) -> Mesh:
        _global_mesh[0] = self._previous  # inside `with`, the mesh is scoped to the block
        self._token = _context_stack.set((*_context_stack.get(), self.mesh))
        _context_scopes[0] += 1
        _context_changed()
        return self.mesh

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._token is not None
        _context_stack.reset(self._token)
        _context_scopes[0] -= 1
        _context_changed()


def use_mesh(mesh: Mesh) -> set_mesh:
    """`with use_mesh(mesh):` makes `mesh` the mesh in context for the block."""
    return set_mesh(mesh)


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


def _mesh_in(value: Any) -> Mesh | AbstractMesh | None:
    if isinstance(value, (Mesh, AbstractMesh)):
        return None if value.empty else value
    if isinstance(value, NamedSharding):
        return _mesh_in(value.mesh)
    return None


_RESULT_TYPE_PARAMS: Final = frozenset({"out_sharding", "dst_sharding"})
"""Parameters that give a result's type its mesh (with `sharding`, but for a sharding
constraint's): they place nothing, so they do not say which devices a program runs on."""


def jaxpr_mesh(jaxpr: Any) -> Mesh | AbstractMesh | None:
    """The mesh a program runs on: the one its equations name (`shard_map`'s mesh, a
    sharding constraint's), sub-jaxprs included; None if it names none. A concrete mesh is
    preferred to an abstract one of the same shape; two meshes of different shapes, or two
    different device sets, are an error."""
    from lamina_core.ir._jaxpr import jaxprs_in_params

    found: Mesh | AbstractMesh | None = None
    stack, seen = [jaxpr], set()
    while stack:
        j = stack.pop()
        if id(j) in seen:
            continue
        seen.add(id(j))
        for eqn in j.eqns:
            constrains = eqn.primitive.name == "sharding_constraint"
            for key, value in eqn.params.items():
                if key in _RESULT_TYPE_PARAMS or (key == "sharding" and not constrains):
                    continue
                mesh = _mesh_in(value)
                if mesh is None:
                    continue
                if found is None:
                    found = mesh
                    continue
                same_shape = (found.axis_names, found.axis_sizes) == (
                    mesh.axis_names,
                    mesh.axis_sizes,
                )
                if not same_shape or (
                    isinstance(found, Mesh)
                    and isinstance(mesh, Mesh)
                    and found != mesh
                    and found.devices_flat != mesh.devices_flat
                ):
                    raise ValueError(f"one program uses two different meshes: {found} and {mesh}")
                if isinstance(mesh, Mesh) and not isinstance(found, Mesh):
                    found = mesh
            stack.extend(jaxprs_in_params(eqn.params))
    return found


def named_in_context(spec: PartitionSpec) -> NamedSharding:
    """A bare spec given for a sharding: over the abstract mesh in context (JAX's
    `canonicalize_sharding`), which `set_mesh` must have put there."""
    mesh = get_abstract_mesh()
    if mesh.empty:
        raise ValueError(
            "Using PartitionSpec when you are not under a mesh context is not allowed. "
            "Please pass a NamedSharding instance or enter into a mesh context via "
            f"`jax.set_mesh`. Got {spec}"
        )
    return NamedSharding(mesh, spec)


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
    "get_abstract_mesh",
    "get_concrete_mesh",
    "jaxpr_mesh",
    "set_mesh",
    "spec_axis_names",
    "use_mesh",
]
