"""`jax.experimental.mesh_utils`: device meshes for `lamina.sharding.Mesh` (JAX 0.10.2's names).

Lamina runs on the devices its runtime gets from jaxlib (CPU, and GPU where a plugin is
installed). On those JAX's layout is a plain reshape of the device list (GPU devices sorted by
id first); the TPU torus layouts it also knows need the TPU's physical coordinates, so a TPU
device list is refused unless a handler for its device kind is registered in
`device_kind_handler_dict`, as JAX lets users register one. Loaded on first import, never by
`import lamina`.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lamina_runtime import devices as _all_devices

DeviceMeshHandler = Callable[..., "np.ndarray[Any, np.dtype[Any]] | None"]
"""`handler(mesh_shape, devices, *, contiguous_submeshes)`: a mesh, or None for the default."""

device_kind_handler_dict: dict[str, DeviceMeshHandler] = {}
"""Mesh builders by `device.device_kind`, consulted before the default layout. JAX fills it with
its TPU generations' ring layouts; Lamina has no TPU backend, so it starts empty."""


def _canonical_axis_sizes(axis_sizes: Sequence[int]) -> tuple[int, ...] | None:
    sizes = []
    for size in axis_sizes:  # a non-sequence raises TypeError here, as in JAX
        try:
            sizes.append(int(size))
        except Exception:  # JAX reports any unconvertible size the same way
            return None
    return tuple(sizes)


def create_device_mesh(
    mesh_shape: Sequence[int],
    devices: Sequence[Any] | None = None,
    *,
    contiguous_submeshes: bool = False,
    allow_split_physical_axes: bool = False,
) -> np.ndarray[Any, np.dtype[Any]]:
    """A device array of shape `mesh_shape`, for `lamina.sharding.Mesh`.

    Args:
        mesh_shape: the logical mesh's shape, axes ordered by increasing communication.
        devices: the devices to arrange; `lamina.devices()` by default.
        contiguous_submeshes: ask that each process's devices form a contiguous submesh
            (always so with one process).
        allow_split_physical_axes: allow splitting physical axes (TPU layouts only).

    Returns:
        A NumPy object array of devices with shape `mesh_shape`.

    Raises:
        ValueError: `mesh_shape` holds a non-integer, or its product is not the number of
            devices.
        NotImplementedError: TPU devices with no handler registered for their kind.
    """
    del allow_split_physical_axes  # only the TPU torus layouts split axes
    if devices is None:
        devices = _all_devices()
    shape = _canonical_axis_sizes(mesh_shape)
    if shape is None:
        raise ValueError(
            "`mesh_shape` passed to `create_device_mesh` should be a sequence of"
            f" ints. Got {mesh_shape}"
        )
    if math.prod(shape) != len(devices):
        raise ValueError(
            f"Number of devices {len(devices)} must equal the product of mesh_shape {shape}"
        )
    last = devices[-1]
    handler = device_kind_handler_dict.get(last.device_kind)
    if handler is not None:
        mesh = handler(shape, devices, contiguous_submeshes=contiguous_submeshes)
        if mesh is not None:
            return mesh
    if last.platform == "tpu":
        raise NotImplementedError(
            f"create_device_mesh: no layout for {last.device_kind!r} devices; register one in "
            "lamina.experimental.mesh_utils.device_kind_handler_dict"
        )
    if last.platform == "gpu":
        # JAX's order: the global numbering, not the processes' order.
        return np.asarray(sorted(devices, key=lambda d: d.id)).reshape(shape)
    return np.asarray(devices).reshape(shape)


def create_hybrid_device_mesh(
    mesh_shape: Sequence[int],
    dcn_mesh_shape: Sequence[int],
    devices: Sequence[Any] | None = None,
    *,
    process_is_granule: bool = False,
    should_sort_granules_by_key: bool = True,
    allow_split_physical_axes: bool = False,
) -> np.ndarray[Any, np.dtype[Any]]:
    """A device mesh for two-level (fast inner, slow outer network) parallelism.

    The devices are grouped into granules (slices, or processes with `process_is_granule`);
    each granule gets a `mesh_shape` mesh, and the granules are laid out as `dcn_mesh_shape`.

    Args:
        mesh_shape: the mesh within one granule.
        dcn_mesh_shape: the layout of the granules, in the same axis order.
        devices: the devices to arrange; `lamina.devices()` by default.
        process_is_granule: group by `process_index` rather than `slice_index`.
        should_sort_granules_by_key: order the granules by their slice or process index.
        allow_split_physical_axes: passed to `create_device_mesh`.

    Returns:
        A NumPy object array of devices with shape `mesh_shape * dcn_mesh_shape` (elementwise).

    Raises:
        ValueError: the devices lack the granule attribute (CPU devices have no
            `slice_index`), or the granule count or sizes do not match the shapes.
    """
    if devices is None:
        devices = _all_devices()
    attr = "process_index" if process_is_granule else "slice_index"
    if not hasattr(devices[0], attr):
        raise ValueError(
            f"Device {devices[0]} does not have attribute {attr}. See `process_is_granule` option."
        )
    by_key: dict[Any, list[Any]] = collections.defaultdict(list)
    for device in devices:
        by_key[getattr(device, attr)].append(device)
    granules = (
        [by_key[key] for key in sorted(by_key)]
        if should_sort_granules_by_key
        else list(by_key.values())
    )
    if np.prod(dcn_mesh_shape) != len(granules):
        raise ValueError(
            f"Number of slices {len(granules)} must equal the product of "
            f"dcn_mesh_shape {dcn_mesh_shape}"
        )
    meshes = [
        create_device_mesh(mesh_shape, granule, allow_split_physical_axes=allow_split_physical_axes)
        for granule in granules
    ]
    layout = np.arange(len(granules)).reshape(dcn_mesh_shape)
    blocks = np.vectorize(lambda i: meshes[i], otypes=[object])(layout)
    result: np.ndarray[Any, np.dtype[Any]] = np.block(blocks.tolist())
    return result


__all__ = ["create_device_mesh", "create_hybrid_device_mesh", "device_kind_handler_dict"]
