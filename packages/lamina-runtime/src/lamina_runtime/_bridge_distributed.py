"""The runtime bridge, continued: jaxlib's distributed runtime for multi-process runs.

Part of the bridge (see `_bridge`): with it, the only modules that touch jax/jaxlib runtime
APIs. Processes find each other through jaxlib's coordination service and client, set up by
JAX's public `jax.distributed.initialize`, which also gives the CPU client its cross-process
collectives (gloo, over the coordination service's key-value store). Nothing here is a
transport of Lamina's own.

  [public]   documented JAX API
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import jax  # [public] jax.distributed, jax.config

CPU_COLLECTIVES: Final = "gloo"
"""The CPU client's cross-process collectives (jaxlib 0.10.2 builds gloo's TCP collectives on
the distributed client; "mpi" needs an MPI launcher)."""


def initialize(
    coordinator_address: str | None,
    num_processes: int | None,
    process_id: int | None,
    local_device_ids: int | Sequence[int] | None,
    cluster_detection_method: str | None,
    initialization_timeout: int,
    heartbeat_timeout_seconds: int,
    shutdown_timeout_seconds: int,
    coordinator_bind_address: str | None,
    partition_index: int | None,
) -> None:
    """Join (process 0: start) the coordination service and make the backends global. [public]

    Raises:
        RuntimeError: already initialized, or a backend already exists (JAX's errors).
    """
    jax.config.update("jax_cpu_collectives_implementation", CPU_COLLECTIVES)  # type: ignore[no-untyped-call]
    jax.distributed.initialize(
        coordinator_address,
        num_processes,
        process_id,
        local_device_ids,
        cluster_detection_method,
        initialization_timeout=initialization_timeout,
        heartbeat_timeout_seconds=heartbeat_timeout_seconds,
        shutdown_timeout_seconds=shutdown_timeout_seconds,
        coordinator_bind_address=coordinator_bind_address,
        partition_index=partition_index,
    )


def is_initialized() -> bool:
    return bool(jax.distributed.is_initialized())  # [public]


def shutdown() -> None:
    """Leave the coordination service (process 0: after every other process). [public]"""
    jax.distributed.shutdown()  # type: ignore[no-untyped-call]
