"""JAX's public tools Lamina passes through unchanged: the profiler, DLPack import, and the
registration of foreign (FFI) call targets with XLA.

Both work on the runtime (the PJRT client, its devices and buffers) Lamina shares with JAX,
and neither traces: a profile captures Lamina's executions as JAX's, and an imported DLPack
tensor becomes a device array that the caller wraps as a Lamina `Array`.

  jax.profiler   [public] traces, annotations, device memory profiles, the profiler server
  jax.dlpack     [public] from_dlpack, is_supported_dtype
  jaxlib.xla_client  [semi] register_custom_call_target, register_custom_type,
                 register_custom_call_as_batch_partitionable
"""

from __future__ import annotations

from typing import Any

import jax.dlpack  # [public]
import jax.profiler  # [public]
import jaxlib  # [public] the package folder, for its bundled C++ headers
from jaxlib import xla_client  # [semi]

ProfileData = jax.profiler.ProfileData
ProfileEvent = jax.profiler.ProfileEvent
ProfileOptions = jax.profiler.ProfileOptions
ProfilePlane = jax.profiler.ProfilePlane
StepTraceAnnotation = jax.profiler.StepTraceAnnotation
TraceAnnotation = jax.profiler.TraceAnnotation
annotate_function = jax.profiler.annotate_function
device_memory_profile = jax.profiler.device_memory_profile
register_subprocess = jax.profiler.register_subprocess
save_device_memory_profile = jax.profiler.save_device_memory_profile
start_server = jax.profiler.start_server
start_trace = jax.profiler.start_trace
stop_server = jax.profiler.stop_server
stop_trace = jax.profiler.stop_trace
trace = jax.profiler.trace


def device_array_from_dlpack(external: Any, device: Any = None, copy: bool | None = None) -> Any:
    """A device array (jax.Array) over the DLPack tensor `external`, shared when no copy or
    transfer is asked for."""
    return jax.dlpack.from_dlpack(external, device=device, copy=copy)


def is_supported_dlpack_dtype(dtype: Any) -> bool:
    return bool(jax.dlpack.is_supported_dtype(dtype))


def register_custom_call_target(
    name: str, fn: Any, platform: str, api_version: int, **kwargs: Any
) -> None:
    xla_client.register_custom_call_target(name, fn, platform, api_version, **kwargs)


def register_custom_type(name: str, type_registration: Any, platform: str) -> None:
    xla_client.register_custom_type(name, type_registration, platform=platform)


def register_custom_call_as_batch_partitionable(name: str) -> None:
    xla_client.register_custom_call_as_batch_partitionable(name)


def jaxlib_folder() -> str:
    # `__path__` exists for regular and namespace packages alike (JAX checks `__file__` first).
    return str(next(iter(jaxlib.__path__)))
