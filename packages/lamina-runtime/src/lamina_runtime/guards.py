"""The options of `jax.config` about where programs run and what may move: the platforms and
the default device, jaxlib's transfer guards, and `jax_no_execution`.

Lamina runs on JAX's backend, so the platform options and the transfer guards are passed on to
real JAX's configuration (through the bridge), where JAX's backend start and jaxlib's transfer
code read them: they behave exactly as in JAX, errors included. A transfer guard set in a scope
(`with lamina.transfer_guard("disallow"):`) is set in jaxlib's per-thread state while the scope
is open, as JAX's scopes do.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, Final

from lamina_core.config import (
    affects_tracing,
    config,
    define_flag,
    define_object,
    define_optional_enum,
    define_string,
)
from lamina_runtime import _bridge, _bridge_devices

_TOUCHED: Final = config.touched
_GUARD_LEVELS: Final = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")
_DIRECTIONS: Final = ("host_to_device", "device_to_device", "device_to_host")


def _passed_to_jax(name: str) -> None:
    """Options JAX's own runtime reads: every value set is set in JAX's configuration too."""
    option = config.option(name)
    option.on_update = lambda value: _bridge_devices.set_jax_option(name, value)
    if option.value != option.default:  # LAMINA_<NAME> (JAX reads JAX_<NAME> itself)
        _bridge_devices.set_jax_option(name, option.value)


platforms: Final = define_string(
    "jax_platforms",
    None,
    "Comma-separated list of platform names to initialize (the first is the default); if one "
    "fails to initialize, JAX's error is raised when devices are first asked for.",
    optional=True,
)
_passed_to_jax("jax_platforms")
platform_name: Final = define_flag(  # a plain `Flag` in JAX: any value, unchecked
    "jax_platform_name", "", "Deprecated, please use --jax_platforms instead."
)
_passed_to_jax("jax_platform_name")

for _direction in _DIRECTIONS:
    define_optional_enum(
        f"jax_transfer_guard_{_direction}",
        _GUARD_LEVELS,
        None,
        f"Select the transfer guard level for {_direction.replace('_', '-')} transfers. "
        'Default is "allow".',
    )
    _passed_to_jax(f"jax_transfer_guard_{_direction}")
    config.option(f"jax_transfer_guard_{_direction}").on_scope = (
        lambda value, name=f"jax_transfer_guard_{_direction}": _bridge_devices.jax_option_scope(
            name, value
        )
    )
define_optional_enum(
    "jax_transfer_guard",
    _GUARD_LEVELS,
    None,
    "Select the transfer guard level for all transfers. This option is set-only; the level for "
    'a specific direction is read from the per-direction option. Default is "allow".',
)


def _guard_all(value: str | None) -> None:
    for direction in _DIRECTIONS:
        config.update(f"jax_transfer_guard_{direction}", value)


config.option("jax_transfer_guard").on_update = _guard_all


@contextlib.contextmanager
def transfer_guard(new_val: str) -> Iterator[None]:
    """Inside the block, this thread's transfers in every direction are guarded at level
    `new_val` ("allow", "log", "disallow", "log_explicit", "disallow_explicit")."""
    with config(
        jax_transfer_guard_host_to_device=new_val,
        jax_transfer_guard_device_to_device=new_val,
        jax_transfer_guard_device_to_host=new_val,
        jax_transfer_guard=new_val,
    ):
        yield


def explicit_transfer(to_device: bool) -> contextlib.AbstractContextManager[None]:
    """Transfers the user asked for (`device_put`, `device_get`): guards at the "disallow"
    level let them through, as JAX's do."""
    return _bridge_devices.explicit_transfer(to_device)


def _check_default_device(value: Any) -> None:
    if value is None or isinstance(value, _bridge.Device) or value in ("cpu", "gpu", "tpu"):
        return
    raise ValueError(
        "jax.default_device must be passed either a Device object (e.g. "
        "`jax.devices('cpu')[0]`) or a platform name string like 'cpu' or 'gpu', got: "
        f"{value!r}"
    )


# Where jitted functions compile for: part of the tracing key, as JAX keys its caches on it.
default_device_option: Final = affects_tracing(
    define_object(
        "jax_default_device",
        None,
        "Configure the default device for JAX operations: a Device (e.g. "
        '``jax.devices("cpu")[0]``), a platform name, or None for the system default.',
        validator=_check_default_device,
    )
)


def configured_device() -> Any:
    """The device `jax_default_device` names here and now, or None."""
    if "jax_default_device" not in _TOUCHED:
        return None
    value = default_device_option.value
    if isinstance(value, str):  # a platform: its first device
        return _bridge_devices.local_devices(value)[0]
    return value


_bridge_devices.choose_default_device(configured_device)

no_execution: Final = affects_tracing(
    config.define_bool("jax_no_execution", False, "Disallow JAX executions.")
)


def check_execution_allowed(name: str) -> None:
    """JAX's error for running program `name` under `jax_no_execution` (cheap when unset)."""
    if "jax_no_execution" in _TOUCHED and no_execution.value:
        raise RuntimeError(
            f"JAX tried to execute function {name}, but the no_execution config option is set"
        )
