"""The runtime bridge (see `_bridge`): the backend clients, in JAX's registry of them.

Lamina's devices are the devices of the PJRT clients JAX's backend registry makes (the bridge
asks `jax.devices`), so the clients, the factories that make them and forgetting them all go
through that one registry: a backend registered here is one Lamina runs on, and a client
cleared here is one no Lamina device comes from any more. What the bridge itself caches of
the clients (the first device, single-device shardings, meshes) is forgotten with them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.extend.backend as _backends  # [public] the backend registry's documented API

from lamina_runtime import _bridge_devices, _bridge_executables

ifrt_proxy = _backends.ifrt_proxy  # [public] jaxlib's IFRT proxy client module


def backends() -> dict[str, Any]:
    """The initialized backend clients by platform name (JAX's own dict). [public]"""
    found: dict[str, Any] = _backends.backends()
    return found


def get_backend(platform: Any = None) -> Any:
    """The client of `platform` (a name, a client, or None for the default). [public]"""
    return _backends.get_backend(platform)


def backend_xla_version(platform: Any = None) -> int | None:
    """The XLA version a plugin client reports, or None. [public]"""
    version: int | None = _backends.backend_xla_version(platform)
    return version


def register_backend_factory(
    name: str,
    factory: Callable[[], Any],
    *,
    priority: int = 0,
    fail_quietly: bool = True,
    experimental: bool = False,
    make_topology: Callable[..., Any] | None = None,
    c_api: Any | None = None,
) -> None:
    """Make `factory()` the client of platform `name` when the backends start. [public]"""
    _backends.register_backend_factory(
        name,
        factory,
        priority=priority,
        fail_quietly=fail_quietly,
        experimental=experimental,
        make_topology=make_topology,
        c_api=c_api,
    )


def clear_backends() -> None:
    """Drop every client (JAX's caches over them go too) and the bridge's caches of their
    devices, so that the next device asked for comes from a new client. [public]"""
    _backends.clear_backends()  # type: ignore[no-untyped-call]  # JAX leaves it unannotated
    _bridge_devices.first_local_device.cache_clear()
    _bridge_devices.single_device_sharding.cache_clear()
    _bridge_devices.named_sharding.cache_clear()


def compile_options(
    num_replicas: int,
    num_partitions: int,
    device_ids: Any,
    overrides: dict[str, _bridge_executables.CompilerOption] | None,
    fdo_profile: bytes | None,
) -> Any:
    """Lamina's compile options (`_bridge_executables.compile_options`) with a profile for
    feedback-directed optimization. [semi] `ExecutableBuildOptions.fdo_profile`"""
    options = _bridge_executables.compile_options(
        num_replicas, num_partitions, device_ids, overrides
    )
    if fdo_profile is not None:
        options.executable_build_options.fdo_profile = fdo_profile
    return options
