"""`make_mesh`: a mesh over this process's devices, as `jax.make_mesh`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core.ir import AxisType, Mesh
from lamina_runtime import _bridge_devices


def make_mesh(
    axis_shapes: Sequence[int],
    axis_names: Sequence[str],
    axis_types: tuple[AxisType, ...] | None = None,
    *,
    devices: Sequence[Any] | None = None,
) -> Mesh:
    """A mesh of `axis_shapes` named `axis_names` over the first devices (or `devices`); its
    axes are `Explicit` unless `axis_types` says otherwise (JAX 0.10's default)."""
    shape = tuple(int(s) for s in axis_shapes)
    pool = list(_bridge_devices.devices() if devices is None else devices)
    size = math.prod(shape)
    if size > len(pool):
        raise ValueError(
            f"Number of devices {len(pool)} must be >= the product of mesh_shape {shape}"
        )
    grid = np.empty(size, dtype=object)
    grid[:] = pool[:size]
    names = tuple(axis_names)
    if axis_types is None:
        axis_types = (AxisType.Explicit,) * len(names)
    return Mesh(grid.reshape(shape), names, axis_types)
