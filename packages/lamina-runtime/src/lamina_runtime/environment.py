"""Devices, processes and the installation, as JAX's top-level functions report them.

Lamina runs in one process on the devices of JAX's default backend (one CPU device here), so
process indices come from the devices themselves and the counts follow from the device list.
"""

from __future__ import annotations

import importlib.metadata
import platform
import sys
import warnings
from typing import Any, Final

import numpy as np

from lamina_core import tree_util
from lamina_core.config import config
from lamina_runtime import _bridge, _bridge_devices
from lamina_runtime._version import __version__

Device = _bridge.Device
"""The type of every device (`jax.Device`): jaxlib's, as `devices()` returns them."""


num_cpu_devices: Final = config.define(
    "jax_num_cpu_devices",
    -1,
    int,
    "Number of CPU devices to use (-1: the XLA flag --xla_force_host_platform_device_count "
    "decides). Must be set before the backend starts, i.e. before any array is made.",
    validator=_bridge_devices.set_num_cpu_devices,
)
if num_cpu_devices.value != -1:  # set through LAMINA_NUM_CPU_DEVICES / JAX_NUM_CPU_DEVICES
    _bridge_devices.set_num_cpu_devices(num_cpu_devices.value)


def device_count(backend: str | None = None) -> int:
    """How many devices `backend` (default: the default backend) has, in every process."""
    return len(_bridge_devices.devices(backend))


def local_device_count(backend: str | None = None) -> int:
    """How many of `backend`'s devices this process drives."""
    return len(_bridge_devices.local_devices(backend))


def default_backend() -> str:
    """The platform name (`"cpu"`, `"gpu"`, `"tpu"`) of the default device."""
    return str(_bridge_devices.default_device().platform)


def process_index(backend: str | None = None) -> int:
    """This process's index among the processes sharing `backend` (0 on a single host)."""
    return int(_bridge_devices.local_devices(backend)[0].process_index)


def process_count(backend: str | None = None) -> int:
    """How many processes share `backend`'s devices."""
    return max((int(d.process_index) for d in _bridge_devices.devices(backend)), default=0) + 1


def process_indices(backend: str | None = None) -> list[int]:
    """Every process index of `backend`: `range(process_count())` as a list."""
    return list(range(process_count(backend)))


def _renamed(old: str, new: str) -> None:
    # JAX's message names the old aliases as it does, including its own slips.
    warnings.warn(
        f"jax.{old} has been renamed to jax.{new}. This alias will eventually be removed; "
        "please update your code.",
        stacklevel=3,
    )


def host_id(backend: str | None = None) -> int:
    """The old name of `process_index` (warns, as JAX does)."""
    _renamed("process_index", "process_index")
    return process_index(backend)


def host_count(backend: str | None = None) -> int:
    """The old name of `process_count` (warns, as JAX does)."""
    _renamed("process_count", "process_count")
    return process_count(backend)


def host_ids(backend: str | None = None) -> list[int]:
    """The old name of `process_indices` (warns, as JAX does)."""
    _renamed("process_indexs", "process_indices")
    return process_indices(backend)


def effects_barrier() -> None:
    """Wait until every ordered effect has run. Lamina's effects (Ref updates) run in program
    order on one device, so nothing is ever pending: this returns at once."""


def copy_to_host_async(x: Any) -> Any:
    """Start copying every array leaf of `x` to the host without waiting; returns `x`."""
    for leaf in tree_util.tree_leaves(x):
        start = getattr(leaf, "copy_to_host_async", None)
        if start is not None:
            start()
    return x


def _installed(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def environment_info() -> str:
    """What `print_environment_info` prints: versions, the platform and the devices."""
    devices = _bridge_devices.devices()
    lines = [
        f"lamina:    {__version__}",
        f"jaxlib:    {_installed('jaxlib')}",
        f"numpy:     {np.__version__}",
        f"python:    {sys.version}",
        f"device info: {devices[0].device_kind}-{len(devices)}, {local_device_count()} local "
        f"devices",
        f"process_count: {process_count()}",
        f"platform: {platform.uname()}",
    ]
    return "\n".join(lines)


def print_environment_info(return_string: bool = False) -> str | None:
    """Print (or, with `return_string`, return) the versions and devices Lamina runs with."""
    info = environment_info()
    if return_string:
        return info
    print(info)
    return None
