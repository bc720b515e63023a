"""Device-level functions of the public API: devices, transfers, waiting."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lamina_core import tree_util
from lamina_core.ir import ShapedArray, dtypes
from lamina_core.lax import copy_semantics_of, stage_device_put
from lamina_core.trace import Tracer
from lamina_core.transforms import flatten_axes
from lamina_runtime import _bridge_devices, guards
from lamina_runtime import sharding as shardings
from lamina_runtime.array import Array, placement_target, put


def devices(backend: str | None = None) -> list[Any]:
    """The devices of `backend` (default: the default backend), as `jax.devices`."""
    return _bridge_devices.devices(backend)


def local_devices(
    process_index: int | None = None, backend: str | None = None, host_id: int | None = None
) -> list[Any]:
    """The devices process `process_index` (default: this one) drives, as `jax.local_devices`;
    `host_id` is its old name (warns, as JAX's).

    Raises:
        ValueError: no process has that index.
    """
    if host_id is not None:
        warnings.warn(
            "The argument to jax.local_devices has been renamed from `host_id` to "
            "`process_index`. This alias will eventually be removed; please update "
            "your code.",
            stacklevel=2,
        )
        process_index = host_id
    if process_index is None:
        return _bridge_devices.local_devices(backend)
    every = _bridge_devices.devices(backend)
    if not 0 <= process_index <= max(d.process_index for d in every):
        raise ValueError(f"Unknown process_index {process_index}")
    return [d for d in every if d.process_index == process_index]


def live_arrays(platform: str | None = None) -> list[Array]:
    """The arrays alive on `platform`'s devices (default: the default backend), as
    `jax.live_arrays`: each device buffer in a new `Array` (deleting it frees the buffer)."""
    return [Array(buf) for buf in _bridge_devices.live_arrays(platform)]


def _per_leaf(name: str, tree: Any, flag: Any, count: int) -> list[Any]:
    if isinstance(flag, bool) or flag is None:
        return [flag] * count
    return flatten_axes(name, tree, flag)


def device_put(
    x: Any, device: Any = None, *, src: Any = None, donate: Any = False, may_alias: Any = None
) -> Any:
    """Put every leaf of `x` on `device` (default: the default device) as an `Array`; `device`
    may be a device, a `SingleDeviceSharding`, a `NamedSharding`, or a bare `P` over the mesh
    in context.

    `src` names where the leaves are; `donate` and `may_alias` (a bool or a pytree prefix of
    `x` of bools) say whether the input buffer may be given up or reused, as JAX's: under a
    trace they are the staged equation's `srcs` and `copy_semantics`.

    Raises:
        ValueError: `donate` and `may_alias` are both true for a leaf.
    """
    leaves, tree = tree_util.tree_flatten(x)
    donates = _per_leaf("device_put donate", tree, donate, len(leaves))
    aliases = _per_leaf("device_put may_alias", tree, may_alias, len(leaves))
    semantics = [copy_semantics_of(d, m) for d, m in zip(donates, aliases, strict=True)]
    if any(isinstance(leaf, Tracer) for leaf in leaves):
        # Under a trace JAX stages one `device_put` equation for all the leaves.
        srcs = [src] * len(leaves)
        staged = stage_device_put(leaves, device, srcs=srcs, copy_semantics=semantics)
        return tree_util.tree_unflatten(tree, staged)
    target = placement_target(device)
    with guards.explicit_transfer(to_device=True):
        # A new `Array` per leaf: reusing, copying and donating give the same values.
        return tree_util.tree_map(lambda leaf: put(leaf, target), x)


def _checked_dtype(pieces: Sequence[Any], dtype: Any, fname: str) -> np.dtype[Any]:
    """The array's dtype: `dtype` if given (the pieces must have it), else the first piece's.

    Raises:
        ValueError: no piece and no `dtype`, or a `dtype` the pieces do not have.
    """
    if dtype is None:
        if not pieces:
            raise ValueError(
                "If the Array has no addressable shards, `dtype` must be provided "
                f"via the `dtype` argument to `jax.{fname}`."
            )
        first: np.dtype[Any] = np.dtype(pieces[0].dtype)
        return first
    wanted = dtypes.canonicalize_dtype(dtype)
    if pieces and pieces[0].dtype != wanted:
        raise ValueError(
            f"If `dtype` is provided to `jax.{fname}`, it must match the dtype "
            f"of the addressable shards. Got dtype={wanted} and shard "
            f"dtype={pieces[0].dtype}`."
        )
    return np.dtype(wanted)


def make_array_from_callback(
    shape: tuple[int, ...],
    sharding: Any,
    data_callback: Callable[[Any], Any],
    dtype: Any = None,
) -> Array:
    """An array of `shape` placed as `sharding`, each device's piece `data_callback(index)`;
    over many processes, each calls it for its own (addressable) devices only. `dtype`, if
    given, must be the pieces' (and is needed when this process holds no piece)."""
    resolved = shardings.resolve(sharding, "make_array_from_callback")
    jax_sharding = shardings.to_jax(resolved)
    shardings.check_divides(resolved, tuple(shape))
    values = [
        (device, np.asarray(data_callback(index)))
        for device, index in jax_sharding.addressable_devices_indices_map(tuple(shape)).items()
    ]
    dtype = _checked_dtype([v for _, v in values], dtype, "make_array_from_callback")
    pieces = [
        _bridge_devices.device_put(value, value.shape, value.dtype, False, device)
        for device, value in values
    ]
    return Array(_bridge_devices.assemble(tuple(shape), jax_sharding, pieces),
                 ShapedArray(tuple(shape), dtype))  # fmt: skip


def make_array_from_single_device_arrays(
    shape: tuple[int, ...], sharding: Any, arrays: Sequence[Any], *, dtype: Any = None
) -> Array:
    """One array of `shape` placed as `sharding` from each device's piece (single-device
    arrays); `dtype`, if given, must be the pieces'."""
    resolved = shardings.resolve(sharding, "make_array_from_single_device_arrays")
    _checked_dtype(arrays, dtype, "make_array_from_single_device_arrays")
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
