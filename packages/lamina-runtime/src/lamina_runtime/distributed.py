"""`jax.distributed`: one program over the devices of many processes.

Each process runs the same program; `initialize` connects them through jaxlib's coordination
service (process 0 hosts it) before any device is touched. Afterwards `devices()` lists every
process's devices, `local_devices()` this process's, and programs compiled for a mesh of global
devices run in every process at once, each feeding and reading its own (addressable) shards;
XLA's collectives cross processes (gloo on CPU).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from lamina_runtime import _bridge_distributed


def initialize(
    coordinator_address: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    local_device_ids: int | Sequence[int] | None = None,
    cluster_detection_method: str | None = None,
    initialization_timeout: int = 300,
    heartbeat_timeout_seconds: int = 100,
    shutdown_timeout_seconds: int = 300,
    coordinator_bind_address: str | None = None,
    slice_index: int | None = None,
    partition_index: int | None = None,
) -> None:
    """Connect this process to the others, as `jax.distributed.initialize`: call it first,
    before anything touches a device.

    `coordinator_address` is process 0's `host:port` (process 0 starts the coordination
    service there); `process_id` is this process's index in `range(num_processes)`;
    `local_device_ids` restricts the devices this process drives. On clusters JAX detects
    (Slurm, Open MPI, TPU) the arguments may be left out.

    Raises:
        RuntimeError: called twice, or after a device was touched.
    """
    if partition_index is None and slice_index is not None:
        warnings.warn(
            "`slice_index` has been deprecated. Please use `partition_index` instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        partition_index = slice_index
    _bridge_distributed.initialize(
        coordinator_address,
        num_processes,
        process_id,
        local_device_ids,
        cluster_detection_method,
        initialization_timeout,
        heartbeat_timeout_seconds,
        shutdown_timeout_seconds,
        coordinator_bind_address,
        partition_index,
    )


def is_initialized() -> bool:
    """Whether `initialize` has connected this process (and `shutdown` has not yet run)."""
    return _bridge_distributed.is_initialized()


def shutdown() -> None:
    """Disconnect from the other processes; does nothing if not connected."""
    _bridge_distributed.shutdown()


__all__ = ["initialize", "is_initialized", "shutdown"]
