"""`jax.interpreters.pxla`: what is left of JAX's pmap-era module in 0.10.2.

Its one public name is `create_compile_options` (the XLA compile options of a program over an
array of devices). JAX keeps a few more names behind deprecation warnings; Lamina gives the
type aliases among them (`Index`, `MeshAxisName`) with JAX's warning, and for the names JAX
removed in v0.10.0 raises JAX's `AttributeError`. The rest (the executables, result handlers,
the `with mesh:` resource environment and HLO-sharding helpers) are JAX internals Lamina does
not have: use `jax.jit(...).lower(...)`, `jax.sharding` and `jax.set_mesh` instead.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Union

import numpy as np

from lamina_runtime import get_compile_options

_Index = Union[int, slice, tuple[Union[int, slice], ...]]  # noqa: UP007  (JAX's alias, printed)

_DEPRECATED: Mapping[str, tuple[str, object]] = {
    "Index": ("jax.interpreters.pxla.Index is deprecated as of JAX v0.8.2.", _Index),
    "MeshAxisName": (
        "jax.interpreters.pxla.MeshAxisName is deprecated as of JAX v0.8.2. Use "
        "jax.sharding.Mesh axis names directly.",
        Any,
    ),
}

_PMAP_HINT = " Please use `jax.shard_map` instead of `jax.pmap`."
_REMOVED: Mapping[str, str] = {
    "MapTracer": "",
    "PmapExecutable": "",
    "parallel_callable": "",
    "shard_args": "",
    **dict.fromkeys(
        (
            "Chunked",
            "NoSharding",
            "Replicated",
            "ShardedAxis",
            "ShardingSpec",
            "Unstacked",
            "spec_to_indices",
        ),
        _PMAP_HINT,
    ),
}


def create_compile_options(
    computation: Any,
    tuple_args: bool,
    allow_prop_to_inputs: Sequence[bool],
    allow_prop_to_outputs: Sequence[bool],
    backend: Any,
    np_dev: np.ndarray,
    compiler_options: dict[str, Any],
) -> Any:
    """The compile options of `computation` partitioned over the devices `np_dev`.

    Args:
        computation: the module (JAX reads only whether to log its compilation).
        tuple_args: whether the parameters come as one tuple.
        allow_prop_to_inputs: per parameter, whether XLA may choose its sharding.
        allow_prop_to_outputs: per result, whether XLA may choose its sharding.
        backend: the client compiled for.
        np_dev: the devices, one partition each.
        compiler_options: XLA options by name; an `fdo_profile` entry is taken out of it.

    Returns:
        jaxlib's `CompileOptions`.
    """
    del computation
    devices = np.asarray(np_dev)
    fdo_profile = compiler_options.pop("fdo_profile", None)
    options = get_compile_options(
        num_replicas=1,
        num_partitions=devices.size,
        device_assignment=devices.reshape((1, devices.size)),
        env_options_overrides=compiler_options,
        fdo_profile=fdo_profile,
        backend=backend,
    )
    options.parameter_is_tupled_arguments = tuple_args
    build = options.executable_build_options
    build.allow_spmd_sharding_propagation_to_parameters = list(allow_prop_to_inputs)
    build.allow_spmd_sharding_propagation_to_output = list(allow_prop_to_outputs)
    return options


def __getattr__(name: str) -> object:
    if name in _DEPRECATED:
        message, value = _DEPRECATED[name]
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return value
    if name in _REMOVED:
        raise AttributeError(
            f"jax.interpreters.pxla.{name} was removed in JAX v0.10.0.{_REMOVED[name]}"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
