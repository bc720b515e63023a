"""`jax._src.xla_bridge` under `lamina.as_jax`: what libraries read of JAX's backend registry,
answered by Lamina's runtime (whose backends are the clients of that same registry).

`_backends` (chex's `set_n_cpu_devices` reads it to learn whether the CPU backend has started,
after which the device count is fixed) is computed at each read and starts no backend; the
functions are Lamina's public ones under JAX's names here.
"""

from __future__ import annotations

from typing import Any

import lamina_runtime
from lamina import (
    default_backend,
    device_count,
    devices,
    local_device_count,
    local_devices,
    process_count,
    process_index,
)

__all__ = [
    "backends_are_initialized",
    "default_backend",
    "device_count",
    "devices",
    "local_device_count",
    "local_devices",
    "process_count",
    "process_index",
]


def backends_are_initialized() -> bool:
    """Whether the backends have started (after which XLA's flags no longer apply)."""
    return bool(lamina_runtime.started_backends())


def __getattr__(name: str) -> Any:
    if name == "_backends":  # read live: a module attribute would be a snapshot
        return lamina_runtime.started_backends()
    raise AttributeError(
        f"lamina.as_jax: jax._src.xla_bridge has no {name!r} in Lamina (it serves only "
        f"_backends, {', '.join(__all__)})"
    )
