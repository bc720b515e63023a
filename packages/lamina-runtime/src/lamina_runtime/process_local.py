"""`make_array_from_process_local_data`: a global array from the data each process holds.

Each process passes the part of the array its own devices hold. Along an axis the sharding
splits over processes, a process's data is its pieces laid end to end (in the order of their
offsets in the global array); along any other axis it is the whole axis. With no
`global_shape`, an axis is as long as the process's data times the number of process groups
splitting it, which must then be uniform: each process holding the same number of pieces, and
processes holding any piece in common holding the same pieces.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lamina_core import tree_util
from lamina_core.ir import NamedSharding
from lamina_runtime import sharding as shardings
from lamina_runtime.api import device_put, make_array_from_callback
from lamina_runtime.array import Array
from lamina_runtime.environment import process_count, process_index


def _process_of(device: Any) -> int:
    return int(device.process_index)


def _pieces_by_device(sharding: NamedSharding, dim: int, ndim: int) -> dict[Any, int]:
    """Which piece along array axis `dim` each device of the mesh holds (on an array whose
    pieces are one element long, a piece's offset is its number)."""
    one_each = sharding.devices_indices_map(sharding.split_counts(ndim))
    return {device: index[dim].start or 0 for device, index in one_each.items()}


def process_groups(
    sharding: NamedSharding,
    dim: int,
    ndim: int,
    process_of: Callable[[Any], int] = _process_of,
) -> list[frozenset[int]] | None:
    """The sets of pieces along `dim` the processes hold, one per distinct set, or None when
    the split is not uniform (sets of different sizes, or overlapping without being equal)."""
    held: dict[int, set[int]] = {}
    for device, piece in _pieces_by_device(sharding, dim, ndim).items():
        held.setdefault(process_of(device), set()).add(piece)
    groups = sorted({frozenset(s) for s in held.values()}, key=min)
    if len({len(g) for g in groups}) != 1:
        return None
    seen: set[int] = set()
    for group in groups:
        if seen & group:
            return None
        seen |= group
    return groups


def global_shape_of(
    sharding: NamedSharding,
    local_shape: Sequence[int],
    process_of: Callable[[Any], int] = _process_of,
) -> tuple[int | None, ...]:
    """The global shape a process's data of `local_shape` implies (None on a non-uniform axis)."""
    out: list[int | None] = []
    for dim, size in enumerate(local_shape):
        groups = process_groups(sharding, dim, len(local_shape), process_of)
        out.append(None if groups is None else size * len(groups))
    return tuple(out)


def local_index(
    sharding: NamedSharding,
    global_shape: Sequence[int],
    local_shape: Sequence[int],
    me: int,
    process_of: Callable[[Any], int] = _process_of,
) -> Callable[[tuple[slice, ...]], tuple[slice, ...]]:
    """Where, in process `me`'s data, the piece of the global array at `index` is."""
    counts = sharding.split_counts(len(global_shape))
    shard = [g // n for g, n in zip(global_shape, counts, strict=True)]
    mine: list[list[int]] = []
    for dim, (global_dim, local_dim) in enumerate(zip(global_shape, local_shape, strict=True)):
        held = sorted(
            {
                p * shard[dim]
                for d, p in _pieces_by_device(sharding, dim, len(global_shape)).items()
                if process_of(d) == me
            }
        )
        if local_dim != global_dim and local_dim != len(held) * shard[dim]:
            raise ValueError(
                "Invalid host data, each dimension should match either global or process shape. "
                f"In dimension {dim}, the process data has {local_dim} elements. Process "
                f"addresses {len(held) * shard[dim]} elements and "
                f"global_shape={tuple(global_shape)}."
            )
        mine.append([] if local_dim == global_dim else held)

    def index_in_data(index: tuple[slice, ...]) -> tuple[slice, ...]:
        out = []
        for dim, slc in enumerate(index):
            if not mine[dim]:
                out.append(slc)
                continue
            start = mine[dim].index(slc.start or 0) * shard[dim]
            out.append(slice(start, start + shard[dim]))
        return tuple(out)

    return index_in_data


def _per_leaf(prefix: Any, full: Any, is_leaf: Callable[[Any], bool]) -> list[Any]:
    """The leaf of the pytree prefix `prefix` that each leaf of `full` falls under."""
    out: list[Any] = []
    tree_util.tree_map(
        lambda p, sub: out.extend([p] * len(tree_util.tree_leaves(sub))),
        prefix,
        full,
        is_leaf=is_leaf,
    )
    return out


def _from_local(data: Any, sharding: Any, global_shape: tuple[int, ...] | None) -> Array:
    data = np.asarray(data)
    resolved = shardings.resolve(sharding, "make_array_from_process_local_data")
    if not isinstance(resolved, NamedSharding):
        return device_put(data, resolved)  # type: ignore[no-any-return]
    if global_shape is None:
        inferred = global_shape_of(resolved, data.shape)
        if None in inferred:
            raise ValueError(
                "Unable to compute global_shape due to non-uniform sharding. Specify global "
                f"shape directly. Partially computed global_shape={inferred}."
            )
        global_shape = tuple(int(d) for d in inferred)  # type: ignore[arg-type]
    elif None in global_shape:
        raise ValueError(f"global_shape={global_shape} has Nones. This is not supported.")
    where = local_index(resolved, global_shape, data.shape, process_index())
    return make_array_from_callback(global_shape, resolved, lambda index: data[where(index)])


def make_array_from_process_local_data(
    sharding: Any, local_data: Any, global_shape: Any = None
) -> Any:
    """A global array placed as `sharding` from the data this process holds (`local_data`, a
    pytree of arrays; `sharding` and `global_shape` prefixes of it), as JAX's."""
    leaves, tree = tree_util.tree_flatten(local_data)
    shardings_flat = _per_leaf(
        sharding, local_data, lambda x: not isinstance(x, (list, tuple, dict))
    )
    shapes_flat = _per_leaf(global_shape, local_data, lambda x: x is None or isinstance(x, tuple))
    if process_count() == 1:
        for shape, data in zip(shapes_flat, leaves, strict=True):
            if shape is not None and tuple(shape) != np.shape(data):
                raise ValueError(
                    "When calling `make_array_from_process_local_data` on a single process, "
                    "global_shape should be None or equal to local_data.shape.Got "
                    f"global_shape={shape} and local_data.shape={np.shape(data)}."
                )
        return device_put(local_data, sharding)
    out = [
        _from_local(data, s, None if shape is None else tuple(shape))
        for data, s, shape in zip(leaves, shardings_flat, shapes_flat, strict=True)
    ]
    return tree_util.tree_unflatten(tree, out)


__all__ = ["make_array_from_process_local_data"]
