"""Device-level functions of the public API: devices, transfers, waiting."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lamina_core import tree_util
from lamina_core.ir import ShapedArray
from lamina_core.lax import stage_device_put
from lamina_core.trace import Tracer
from lamina_runtime import _bridge_devices, guards
from lamina_runtime import sharding as shardings
from lamina_runtime.array import Array, placement_target, put


def devices(backend: str | None = None) -> list[Any]:
    """The devices of `backend` (default: the default backend), as `jax.devices`."""
    return _bridge_devices.devices(backend)


def local_devices(process_index: int | None = None, backend: str | None = None) -> list[Any]:
    """The devices process `process_index` (default: this one) drives, as `jax.local_devices`."""
    if process_index is None:
        return _bridge_devices.local_devices(backend)
    return [d for d in _bridge_devices.devices(backend) if d.process_index == process_index]


def live_arrays(platform: str | None = None) -> list[Array]:
    """The arrays alive on `platform`'s devices (default: the default backend), as
    `jax.live_arrays`: each device buffer in a new `Array` (deleting it frees the buffer)."""
    return [Array(buf) for buf in _bridge_devices.live_arrays(platform)]


def device_put(x: Any, device: Any = None) -> Any:
    """Put every leaf of `x` on `device` (default: the default device) as an `Array`; `device`
    may be a device, a `SingleDeviceSharding`, a `NamedSharding`, or a bare `P` over the mesh
    in context."""
    leaves, tree = tree_util.tree_flatten(x)
    if any(isinstance(leaf, Tracer) for leaf in leaves):
        # Under a trace JAX stages one `device_put` equation for all the leaves.
        return tree_util.tree_unflatten(tree, stage_device_put(leaves, device))
    target = placement_target(device)
    with guards.explicit_transfer(to_device=True):
        return tree_util.tree_map(lambda leaf: put(leaf, target), x)


def make_array_from_callback(
    shape: tuple[int, ...], sharding: Any, data_callback: Callable[[Any], Any]
) -> Array:
    """An array of `shape` placed as `sharding`, each device's piece `data_callback(index)`;
    over many processes, each calls it for its own (addressable) devices only."""
    resolved = shardings.resolve(sharding, "make_array_from_callback")
    jax_sharding = shardings.to_jax(resolved)
    shardings.check_divides(resolved, tuple(shape))
    pieces = []
    index_map = jax_sharding.addressable_devices_indices_map(tuple(shape))
    for device, index in index_map.items():
        value = np.asarray(data_callback(index))
        pieces.append(_bridge_devices.device_put(value, value.shape, value.dtype, False, device))
    dtype = pieces[0].dtype
    return Array(_bridge_devices.assemble(tuple(shape), jax_sharding, pieces),
                 ShapedArray(tuple(shape), np.dtype(dtype)))  # fmt: skip


def make_array_from_single_device_arrays(
    shape: tuple[int, ...], sharding: Any, arrays: Sequence[Any]
) -> Array:
    """One array of `shape` placed as `sharding` from each device's piece (single-device arrays)."""
    resolved = shardings.resolve(sharding, "make_array_from_single_device_arrays")
    bufs = [a._buf if type(a) is Array else a for a in arrays]
    out = _bridge_devices.assemble(tuple(shape), shardings.to_jax(resolved), bufs)
    return Array(out)


def device_get(x: Any) -> Any:
    """Copy every array leaf of `x` to the host as NumPy arrays."""
    with guards.explicit_transfer(to_device=False):
        return _device_get(x)


def _device_get(x: Any) -> Any:
    return tree_util.tree_map(
        lambda leaf: (
            np.asarray(leaf)
            if type(leaf) is Array or _bridge_devices.is_device_array(leaf)
            else leaf
        ),
        x,
    )


def block_until_ready(x: Any) -> Any:
    """Wait until every array leaf of `x` is computed; returns `x`."""
    for leaf in tree_util.tree_leaves(x):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return x
