"""The backends Lamina runs on, as `jax.extend.backend` shows them: clients, compile options,
and forgetting what was compiled for them.

The clients are JAX's (the bridge's `_bridge_backends`); what this module adds is Lamina's
side: clearing a backend or the in-memory compilation cache empties Lamina's caches as JAX's
do, the default device is the one Lamina's `jax_default_device` names, and compile options
are the ones Lamina compiles with.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from lamina_runtime import _bridge_backends, _bridge_executables
from lamina_runtime._bridge_devices import default_device
from lamina_runtime._jit import clear_caches
from lamina_runtime.executable import runtime

ifrt_proxy = _bridge_backends.ifrt_proxy
backends = _bridge_backends.backends
get_backend = _bridge_backends.get_backend
backend_xla_version = _bridge_backends.backend_xla_version
register_backend_factory = _bridge_backends.register_backend_factory


def clear_backends() -> None:
    """Drop every backend client so that new ones are made on next use, and with them every
    cache of traces and compiled programs (`clear_caches`), whose executables belong to the
    dropped clients. Arrays already made keep their old client alive."""
    _bridge_backends.clear_backends()
    clear_caches()


def clear_in_memory_compilation_cache() -> None:
    """Forget the executables compiled in this process (the persistent cache keeps its
    entries): the next compilation of any module runs XLA again. As in JAX, functions already
    dispatched keep their own compiled programs; `clear_caches` drops those too."""
    runtime().clear()


def get_default_device() -> Any:
    """The device values and programs go to when nothing says otherwise: the one
    `jax_default_device` names (a device, or a platform's first device), else this process's
    first device."""
    return default_device()


def _device_ids(assignment: Any, num_replicas: int, num_partitions: int) -> np.ndarray:
    grid = np.array(assignment)
    if grid.ndim == 1 and num_partitions == 1:  # a list of devices, one per replica
        grid = grid[:, None]
    if num_replicas != grid.shape[0]:
        raise ValueError(
            f"device_assignment does not match num_replicas: {grid} vs {num_replicas}."
        )
    if num_partitions != grid.shape[1]:
        raise ValueError(
            f"device_assignment does not match num_partitions: {grid} vs {num_partitions}."
        )
    if grid.dtype == object:
        grid = np.vectorize(lambda d: d.id, otypes=[int])(grid)
    return grid


def get_compile_options(
    num_replicas: int,
    num_partitions: int,
    device_assignment: Any = None,
    env_options_overrides: Mapping[str, str] | None = None,
    fdo_profile: bytes | None = None,
    detailed_logging: bool = True,
    backend: Any = None,
) -> Any:
    """The XLA compile options Lamina compiles with, for `num_replicas` times
    `num_partitions` devices.

    Args:
        num_replicas: how many replicas the program runs as.
        num_partitions: how many partitions each replica is split into.
        device_assignment: the devices (or device ids), `[num_replicas, num_partitions]`,
            or one per replica when `num_partitions` is 1; None leaves XLA's default.
        env_options_overrides: XLA options by name, as `jit`'s `compiler_options`.
        fdo_profile: a profile for feedback-directed optimization.
        detailed_logging: accepted for JAX's signature; Lamina asks XLA for no extra logs.
        backend: accepted for JAX's signature (JAX reads a profile version from it).

    Returns:
        jaxlib's `CompileOptions`.

    Raises:
        ValueError: `device_assignment`'s shape does not match the counts.
    """
    del detailed_logging, backend
    ids = (
        None
        if device_assignment is None
        else _device_ids(device_assignment, num_replicas, num_partitions)
    )
    overrides: dict[str, _bridge_executables.CompilerOption] | None = (
        None if env_options_overrides is None else dict(env_options_overrides)
    )
    return _bridge_backends.compile_options(
        num_replicas, num_partitions, ids, overrides, fdo_profile
    )
