"""Device-level functions of the public API: devices, transfers, waiting."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import tree_util
from lamina_core.avals import ShapedArray
from lamina_core.lax._device_put import stage_device_put
from lamina_core.tracing import Tracer
from lamina_core.values import typeof
from lamina_runtime import _bridge
from lamina_runtime.array import Array


def devices(backend: str | None = None) -> list[Any]:
    """The devices of `backend` (default: the default backend), as `jax.devices`."""
    return _bridge.devices(backend)


def local_devices(process_index: int | None = None, backend: str | None = None) -> list[Any]:
    return _bridge.local_devices(backend)


def device_put(x: Any, device: Any = None) -> Any:
    """Put every leaf of `x` on `device` (default: the default device) as an `Array`."""
    leaves, tree = tree_util.tree_flatten(x)
    if any(isinstance(leaf, Tracer) for leaf in leaves):
        # Under a trace JAX stages one `device_put` equation for all the leaves.
        return tree_util.tree_unflatten(tree, stage_device_put(leaves, device))
    target = device or _bridge.default_device()

    def put(leaf: Any) -> Array:
        aval = typeof(leaf)
        if not isinstance(aval, ShapedArray):
            raise TypeError(f"device_put: cannot place a value of type {aval.str_short()}")
        if type(leaf) is Array:
            return Array(_bridge.to_device(leaf.jax_array, target), aval)
        if _bridge.is_device_array(leaf):
            return Array(_bridge.to_device(leaf, target), aval)
        return Array(_bridge.device_put(leaf, aval.shape, aval.dtype, aval.weak_type, target), aval)

    return tree_util.tree_map(put, x)


def device_get(x: Any) -> Any:
    """Copy every array leaf of `x` to the host as NumPy arrays."""
    return tree_util.tree_map(
        lambda leaf: (
            np.asarray(leaf) if isinstance(leaf, Array) or _bridge.is_device_array(leaf) else leaf
        ),
        x,
    )


def block_until_ready(x: Any) -> Any:
    """Wait until every array leaf of `x` is computed; returns `x`."""
    for leaf in tree_util.tree_leaves(x):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return x
