"""Meshes, shardings and specs read back from printed jaxprs, and `shard_map` bodies read
under their manual mesh (`ir.parse`).

Params print these values by their repr: `Mesh('x': 2, 'y': 4, axis_types=(Explicit,
Explicit))`, `AbstractMesh('data': 8, axis_types=(Auto,), device_kind=cpu, num_cores=None,
platform=cpu)`, `NamedSharding(mesh=..., spec=P('x',), memory_kind=device)`, `P(None, 'y')`.

A device `Mesh` prints its axes but not its devices, so it reads back over devices found, in
this order: the mesh in context when `parse` runs (`set_mesh(mesh)`) if it has the same axes
(names, sizes and types), so a program is read onto the very mesh it was made for; else the
first devices of the device source the runtime installs (`install_mesh_devices`), as
`make_mesh` takes them. Printing is then exact and the program runs. lamina-core alone has no
devices: a text with a device `Mesh` is read under `set_mesh` of a mesh of its axes (over any
stand-in devices), or is an error that says so. Reading it as an `AbstractMesh` instead would
print differently and could not run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lamina_core.ir import (
    UNCONSTRAINED,
    AbstractMesh,
    AxisType,
    Mesh,
    NamedSharding,
    PartitionSpec,
    ValueForm,
    get_concrete_mesh,
    register_jaxpr_scope,
    register_value_reader,
)
from lamina_core.sharding._shard_map import manual_axes_env, shard_map_p

_device_sources: list[Callable[[], Sequence[Any]]] = []


def install_mesh_devices(devices: Callable[[], Sequence[Any]]) -> None:
    """Read device meshes printed in jaxprs over `devices()` (their first ones, in order)."""
    _device_sources[:] = [devices]


def _shape(form: ValueForm) -> tuple[tuple[Any, ...], tuple[int, ...]]:
    """The axis names and sizes of a printed mesh (`'x': 2, 'y': 4`)."""
    for name, size in form.pairs:
        if type(size) is not int:
            raise TypeError(f"the size of mesh axis {name!r} must be an integer, got {size!r}")
    return tuple(n for n, _ in form.pairs), tuple(s for _, s in form.pairs)


def _axis_types(form: ValueForm, n: int) -> tuple[AxisType, ...]:
    printed = form.kwargs.get("axis_types", (AxisType.Auto,) * n)
    if not isinstance(printed, tuple):
        raise TypeError(f"axis_types must be a tuple, got {printed!r}")
    try:
        return tuple(t if isinstance(t, AxisType) else AxisType[t] for t in printed)
    except KeyError as e:
        raise ValueError(f"unknown axis type {e}: one of Auto, Explicit, Manual") from None


def _unexpected(form: ValueForm, *known: str) -> None:
    extra = [k for k in form.kwargs if k not in known]
    if extra:
        raise TypeError(f"unexpected {extra[0]}=")


def read_mesh(form: ValueForm) -> Mesh:
    """A printed device mesh, over devices found as the module says."""
    _unexpected(form, "axis_types")
    names, sizes = _shape(form)
    if form.args:
        raise TypeError(f"expected 'name: size' items, got {form.args[0]!r}")
    types = _axis_types(form, len(names))
    if not names:
        return Mesh(np.empty((), dtype=object), ())
    context = get_concrete_mesh()
    if (context.axis_names, context.axis_sizes, context.axis_types) == (names, sizes, types):
        return context
    shown = f"Mesh({', '.join(f'{n!r}: {s}' for n, s in zip(names, sizes, strict=True))})"
    if not _device_sources:
        raise ValueError(
            f"no devices to read {shown} over: parse under `set_mesh(mesh)` with a mesh of "
            "these axes, or import lamina_runtime to take the first devices"
        )
    devices = list(_device_sources[0]())
    count = math.prod(sizes)
    if count > len(devices):
        raise ValueError(f"{shown} needs {count} devices, there are {len(devices)}")
    grid = np.empty(count, dtype=object)
    grid[:] = devices[:count]
    return Mesh(grid.reshape(sizes), names, types)


def read_abstract_mesh(form: ValueForm) -> AbstractMesh:
    _unexpected(form, "axis_types", "device_kind", "num_cores", "platform")
    if form.args not in ([], [()]):
        raise TypeError(f"expected 'name: size' items, got {form.args[0]!r}")
    names, sizes = _shape(form)
    kw = form.kwargs
    return AbstractMesh(
        sizes,
        names,
        _axis_types(form, len(names)),
        device_kind=kw.get("device_kind"),
        num_cores=kw.get("num_cores"),
        platform=kw.get("platform"),
    )


def _entry(entry: Any) -> Any:
    if entry == "UNCONSTRAINED":  # printed bare, read as a word
        return UNCONSTRAINED
    return entry


def read_spec(form: ValueForm) -> PartitionSpec:
    _unexpected(form, "unreduced", "reduced")
    if form.pairs:
        raise TypeError("a spec has no 'key: value' items")
    return PartitionSpec(*map(_entry, form.args), **form.kwargs)


def read_named_sharding(form: ValueForm) -> NamedSharding:
    _unexpected(form, "mesh", "spec", "memory_kind")
    mesh, spec = form.kwargs.get("mesh"), form.kwargs.get("spec")
    if form.args or mesh is None or spec is None:
        raise TypeError("expected NamedSharding(mesh=..., spec=...)")
    memory_kind = form.kwargs.get("memory_kind")
    if memory_kind == "device" and isinstance(mesh, Mesh):
        memory_kind = None  # a device mesh's sharding prints `device` for the default
    return NamedSharding(mesh, spec, memory_kind=memory_kind)


register_value_reader("Mesh", read_mesh)
register_value_reader("AbstractMesh", read_abstract_mesh)
register_value_reader("P", read_spec)
register_value_reader("PartitionSpec", read_spec)
register_value_reader("NamedSharding", read_named_sharding)


def _body_scope(
    *, mesh: Mesh | AbstractMesh, newly_manual_axes: frozenset[Any], check_vma: bool = False
) -> Any:
    # The body's types were made under its manual mesh, with its axes bound: read them so.
    if not isinstance(mesh, (Mesh, AbstractMesh)):
        raise TypeError(f"shard_map's mesh must be a Mesh or an AbstractMesh, got {mesh!r}")
    manual = frozenset(newly_manual_axes) | frozenset(mesh.manual_axes)
    unknown = sorted(map(str, manual - frozenset(mesh.axis_names)))
    if unknown:
        raise ValueError(
            f"newly_manual_axes names {', '.join(unknown)}, which the mesh {mesh} does not have"
        )
    return manual_axes_env(mesh, manual, check_vma)


register_jaxpr_scope(shard_map_p.name, ("mesh", "newly_manual_axes", "check_vma"), _body_scope)
