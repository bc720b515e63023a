"""Where arrays live: Lamina's shardings, and how programs are placed on a device mesh.

An array lives on one device (`SingleDeviceSharding`) or is split over a mesh of devices as a
`PartitionSpec` says (`lamina_core.ir._mesh.NamedSharding`). A program runs on one device, or on
every device of a mesh (XLA's SPMD partitioner splits it); its inputs are placed as the
compiled executable expects them, and its outputs are described as XLA placed them, in JAX's
terms (a `PartitionSpec` per output, without trailing unsplit axes).
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from lamina_core import tree_util
from lamina_core.ir import AxisType, Mesh, NamedSharding, PartitionSpec, get_concrete_mesh
from lamina_runtime import _bridge, _bridge_devices, _bridge_executables


class SingleDeviceSharding:
    """An array that lives whole on one device."""

    __slots__ = ("_device", "memory_kind")

    def __init__(self, device: Any, *, memory_kind: str | None = None) -> None:
        self._device = device
        self.memory_kind = memory_kind

    def __repr__(self) -> str:
        return (
            f"SingleDeviceSharding(device={self._device!r}, "
            f"memory_kind={self.memory_kind or 'device'})"
        )

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is SingleDeviceSharding
            and other._device == self._device
            and other.memory_kind == self.memory_kind
        )

    def __hash__(self) -> int:
        return hash((self._device, self.memory_kind))

    @property
    def device_set(self) -> set[Any]:
        return {self._device}

    @property
    def num_devices(self) -> int:
        return 1

    @property
    def is_fully_replicated(self) -> bool:
        return True

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        return tuple(global_shape)


Sharding = NamedSharding | SingleDeviceSharding

_lamina_of: Final[dict[int, tuple[Any, Sharding]]] = {}
"""Lamina's sharding of each jax sharding met, by identity (the entry keeps it alive)."""
_meshes: Final[dict[tuple[Any, ...], Mesh]] = {}


def _mesh_of(
    devices: tuple[Any, ...],
    shape: tuple[int, ...],
    names: tuple[Any, ...],
    types: tuple[AxisType, ...],
) -> Mesh:
    key = (tuple(d.id for d in devices), shape, names, types)
    mesh = _meshes.get(key)
    if mesh is None:
        grid = np.empty(len(devices), dtype=object)
        grid[:] = devices
        mesh = _meshes[key] = Mesh(grid.reshape(shape), names, axis_types=types)
    return mesh


def to_jax(sharding: Sharding) -> Any:
    """jax's sharding for one of Lamina's (what jaxlib's transfers and handlers take)."""
    if isinstance(sharding, SingleDeviceSharding):
        return _bridge_devices.single_device_sharding(sharding._device)
    mesh = sharding.mesh
    if not isinstance(mesh, Mesh):
        raise ValueError(f"{sharding} is on an AbstractMesh: it has no devices to place on")
    # Axis types are part of the key: meshes differing only in them are different meshes, and
    # `of_jax` must give back the one the array was placed with.
    types = tuple(t.name for t in mesh.axis_types)
    key = (mesh.devices_flat, mesh.axis_sizes, mesh.axis_names, sharding.spec.partitions, types)
    jax_sharding = _bridge_devices.named_sharding(*key)
    if id(jax_sharding) not in _lamina_of:
        _lamina_of[id(jax_sharding)] = (jax_sharding, sharding)
    return jax_sharding


def of_jax(jax_sharding: Any) -> Sharding:
    """Lamina's sharding for a jax sharding."""
    known = _lamina_of.get(id(jax_sharding))
    if known is not None:
        return known[1]
    devices, shape, names, partitions, types = _bridge_devices.sharding_parts(jax_sharding)
    found: Sharding
    if not shape:
        found = SingleDeviceSharding(devices[0])
    else:
        mesh = _mesh_of(devices, shape, names, tuple(AxisType[t] for t in types))
        found = NamedSharding(mesh, PartitionSpec(*partitions))
    _lamina_of[id(jax_sharding)] = (jax_sharding, found)
    return found


@dataclass(frozen=True, slots=True)
class BackendDevice:
    """`jit(backend=...)`'s placement: the backend's first local device, looked up when a call
    is placed, so that naming a backend this machine lacks fails only when the function runs,
    as in JAX."""

    backend: str


def jit_placement(
    device: Any, backend: str | None, in_shardings: Any, out_shardings: Any
) -> dict[str, Any]:
    """`jit`'s `in_shardings` and `out_shardings` given its deprecated `device` or `backend`
    argument, as JAX 0.10.2 takes them: with its warning, the whole program on that device
    (or on the backend's first).

    Raises:
        ValueError: both `device` and `backend` are given, or either with shardings.
    """
    if device is None and backend is None:
        return {"in_shardings": in_shardings, "out_shardings": out_shardings}
    warnings.warn(
        "backend and device argument on jit is deprecated. You can use "
        '`jax.device_put(..., jax.local_devices(backend="cpu")[0])` on the inputs to the '
        "jitted function to get the same behavior.",
        DeprecationWarning,
        stacklevel=3,
    )
    if device is not None and backend is not None:
        raise ValueError(
            "can't specify both a device and a backend for jit, "
            f"got device={device!r} and backend={backend!r}"
        )
    for given, name in ((in_shardings, "in_shardings"), (out_shardings, "out_shardings")):
        if given is not None:
            raise ValueError(
                f"If backend or device is specified on jit, then {name} should not be specified."
            )
    target = device if device is not None else BackendDevice(str(backend))
    return {"in_shardings": target, "out_shardings": target}


def resolve(sharding: Any, api: str = "device_put") -> Sharding:
    """A sharding argument (`NamedSharding`, a bare `P` over the mesh in context, a device or
    a `SingleDeviceSharding`) as Lamina's sharding."""
    if isinstance(sharding, (NamedSharding, SingleDeviceSharding)):
        return sharding
    if isinstance(sharding, BackendDevice):
        return SingleDeviceSharding(_bridge_devices.local_devices(sharding.backend)[0])
    if isinstance(sharding, PartitionSpec):
        mesh = get_concrete_mesh()
        if mesh.empty:
            raise ValueError(
                f"Please set a mesh via `jax.set_mesh` if a PartitionSpec is passed to {api}"
            )
        return NamedSharding(mesh, sharding)
    if isinstance(sharding, _bridge.Device):
        return SingleDeviceSharding(sharding)
    raise TypeError(
        f"{api}: expected a Sharding, a PartitionSpec or a Device, got {sharding!r} "
        f"of type {type(sharding).__name__}"
    )


def check_divides(sharding: Sharding, shape: tuple[int, ...]) -> None:
    """JAX's error for an array whose axes the sharding does not split evenly."""
    if not isinstance(sharding, NamedSharding):
        return
    if len(sharding.spec.partitions) > len(shape):
        raise ValueError(
            f"Sharding {sharding} is only valid for values of rank at least "
            f"{len(sharding.spec.partitions)}, but was applied to a value of rank {len(shape)}"
        )
    counts = sharding.split_counts(len(shape))
    for axis, (size, n) in enumerate(zip(shape, counts, strict=True)):
        if size % n:
            raise ValueError(
                f"Sharding {sharding} implies that array axis {axis} is partitioned {n} times, "
                f"but the dimension size is {size} (full shape: {shape}, per-dimension tiling "
                f"factors: {list(counts)} should evenly divide the shape)"
            )


def mesh_devices(sharding: Sharding) -> tuple[Any, ...]:
    if isinstance(sharding, SingleDeviceSharding):
        return (sharding._device,)
    mesh = sharding.mesh
    return mesh.devices_flat if isinstance(mesh, Mesh) else ()


def find_mesh(named: Iterable[tuple[str, Any, Sharding | None]]) -> Mesh | None:
    """The mesh of the values placed over more than one device (name, aval, sharding), or
    None when there are none. All must be on the same devices, in the same order.

    Raises:
        ValueError: JAX's "incompatible devices" error, naming the first two that disagree.
    """
    first: tuple[str, Any, NamedSharding] | None = None
    for name, aval, sharding in named:
        if not isinstance(sharding, NamedSharding) or not isinstance(sharding.mesh, Mesh):
            continue
        if sharding.mesh.size <= 1:
            continue
        if first is None:
            first = (name, aval, sharding)
            continue
        if mesh_devices(first[2]) != mesh_devices(sharding):
            raise ValueError(
                "Received incompatible devices for jitted computation. Got "
                f"{_describe(*first)} and {_describe(name, aval, sharding)}"
            )
    return None if first is None else first[2].mesh  # type: ignore[return-value]


def _describe(name: str, aval: Any, sharding: Sharding) -> str:
    ids = [d.id for d in mesh_devices(sharding)]
    platform = str(mesh_devices(sharding)[0].platform).upper()
    shape = ",".join(map(str, aval.shape))
    return (
        f"{name} with shape {aval.dtype.name}[{shape}] and with device ids {ids} on platform "
        f"{platform}"
    )


def spec_of_tiling(tiling: _bridge_executables.Tiling, mesh: Mesh) -> PartitionSpec | None:
    """The `PartitionSpec` over `mesh` of an XLA placement (as JAX reads one: mesh axes taken
    in the order the device order implies, trailing unsplit axes dropped); None if it is not
    a placement a spec describes."""
    if tiling is None:
        return PartitionSpec()
    dims, devices, replicate_last = tiling
    if not dims:
        return None
    sizes = dict(zip(mesh.axis_names, mesh.axis_sizes, strict=True))
    order = _axis_order(mesh, devices)
    if order is None:
        return None
    axes = iter(n for n in order if sizes[n] > 1)
    partitions: list[tuple[Any, ...]] = []
    for size in dims:
        names: list[Any] = []
        while size > 1:
            name = next(axes, None)
            if name is None or size % sizes[name]:
                return None
            size //= sizes[name]
            names.append(name)
        partitions.append(tuple(names))
    if replicate_last:
        partitions = partitions[:-1]
    while partitions and not partitions[-1]:
        partitions.pop()
    return PartitionSpec(*partitions)


def _axis_order(mesh: Mesh, devices: tuple[int, ...]) -> tuple[Any, ...] | None:
    """The order of mesh axes whose transposition of the mesh gives `devices` (positions)."""
    n = len(mesh.axis_sizes)
    grid = np.arange(mesh.size).reshape(mesh.axis_sizes)
    want = np.asarray(devices)
    if want.size != mesh.size:
        return None
    for perm in itertools.permutations(range(n)):
        if np.array_equal(grid.transpose(perm).ravel(), want):
            return tuple(mesh.axis_names[i] for i in perm)
    return None


def _stripped(spec: PartitionSpec, mesh: Mesh) -> tuple[Any, ...]:
    sizes = mesh.shape
    parts = [
        tuple(n for n in (p if isinstance(p, tuple) else (p,)) if p is not None and sizes[n] > 1)
        for p in spec.partitions
    ]
    while parts and not parts[-1]:
        parts.pop()
    return tuple(parts)


def output_sharding(
    tiling: _bridge_executables.Tiling,
    ndim: int,
    mesh: Mesh,
    orig: tuple[int, NamedSharding] | None,
) -> NamedSharding:
    """An output's sharding as JAX reports it: the first input sharding given (`orig`, with
    its rank) when it places the output the same way, else the spec read from XLA's placement.
    """
    spec = spec_of_tiling(tiling, mesh)
    if spec is None:
        spec = PartitionSpec()
    if mesh.axis_types and all(t is AxisType.Explicit for t in mesh.axis_types):
        # Over Explicit axes JAX reads an output's sharding from its type, whose spec has an
        # entry per axis (`P('i', None)`); Lamina's types carry no sharding yet, so the
        # placement's spec is written out in that form.
        parts = spec.partitions
        return NamedSharding(mesh, spec.update(partitions=(*parts, *[None] * (ndim - len(parts)))))
    if (
        orig is not None
        and orig[0] == ndim
        and orig[1].mesh == mesh
        and _stripped(orig[1].spec, mesh) == _stripped(spec, mesh)
    ):
        return orig[1]
    return NamedSharding(mesh, spec)


def _resolve(s: Any, api: str) -> Any:
    return None if s is None else resolve(s, api)


def per_leaf(spec: Any, args: tuple[Any, ...], n: int, what: str) -> list[Any]:
    """A sharding per flat argument from JAX's `in_shardings` (one, or one per argument)."""
    if spec is None:
        return [None] * n
    if not isinstance(spec, (tuple, list)):
        return [_resolve(spec, f"jit {what}")] * n
    if len(spec) != len(args):
        raise ValueError(
            f"jit {what} has {len(spec)} entries but the function was called with "
            f"{len(args)} positional arguments"
        )
    out: list[Any] = []
    for arg, s in zip(args, spec, strict=True):
        out += [_resolve(s, f"jit {what}")] * len(tree_util.tree_leaves(arg))
    return out + [None] * (n - len(out))


def per_out(spec: Any, out_tree: Any) -> list[Any]:
    """A sharding per flat output from JAX's `out_shardings` (one, or one per output)."""
    n = out_tree.num_leaves
    if spec is None:
        return [None] * n
    if not isinstance(spec, (tuple, list)):
        return [_resolve(spec, "jit out_shardings")] * n
    structure = tree_util.tree_unflatten(out_tree, list(range(n)))
    if not isinstance(structure, (tuple, list)) or len(structure) != len(spec):
        raise ValueError(f"jit out_shardings {spec} does not match the outputs {out_tree}")
    out: list[Any] = [None] * n
    for child, s in zip(structure, spec, strict=True):
        for i in tree_util.tree_leaves(child):
            out[i] = _resolve(s, "jit out_shardings")
    return out
