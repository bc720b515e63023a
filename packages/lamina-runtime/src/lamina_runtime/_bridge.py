"""The runtime bridge: the only Lamina modules that touch jax/jaxlib runtime APIs.

Everything else in Lamina calls the bridge for devices, compilation, transfers, execution
and serialization. Nothing in it traces, transforms or lowers: the PJRT client runs modules
that lamina-mlir built. It is six modules, each owning one concern:

  _bridge               the pinned jaxlib version, the self-test, the jax/jaxlib types others name
  _bridge_devices       devices, avals, host-to-device transfers, buffers, shardings
  _bridge_executables   compile options; compiling, running, saving and inspecting executables
  _bridge_dispatch      jaxlib's C++ jit dispatcher, driven by Lamina
  _bridge_distributed   jaxlib's distributed runtime, for multi-process runs
  _bridge_backends      the backend clients, in JAX's registry of them

Each jax/jaxlib API used is rated where it is imported:

  [public]   documented JAX API
  [semi]     jaxlib module-level API that JAX itself uses, renamed at times (pin jaxlib)
  [private]  underscore names or jaxlib._jax internals (pin jaxlib; the self-test checks them)

Pitfalls handled by the bridge (measured in shared/reference/runtime-bridge.md): NumPy inputs
are copied, never aliased; x64 is passed explicitly to transfers (else jax's own flag decides);
callers check inputs against an executable's shardings before every execution (a mismatch on a
multi-device executable crashes the process instead of raising).
"""

from __future__ import annotations

import importlib.metadata
from typing import Final

import jax.sharding  # [public] Sharding
import jaxlib._jax as _jax  # [private] ArrayImpl, JaxRuntimeError, the self-test's names
from jaxlib import xla_client as xc  # [semi] Device, LoadedExecutable, the self-test's names

EXPECTED_JAXLIB: Final = "0.10.2"
JAXLIB_VERSION: Final = importlib.metadata.version("jaxlib")  # [public] package metadata

DeviceArray = _jax.ArrayImpl  # [private] the concrete class of every jax.Array
JaxRuntimeError = _jax.JaxRuntimeError  # [private] what a failed XLA execution raises
Device = xc.Device  # [semi]
LoadedExecutable = xc.LoadedExecutable  # [semi]
Sharding = jax.sharding.Sharding  # [public]


def is_runtime_module(name: str) -> bool:
    """Whether module `name` belongs to the runtime Lamina runs on: JAX's own modules (their
    lazy imports run while Lamina uses JAX's runtime), jaxlib, PJRT plugins (`jax_plugins`,
    `jax_cuda*`, `jax_rocm*`) and the bridge. Their `import jax...` means real JAX even while
    an alias makes `jax` mean Lamina for everyone else."""
    root = name.partition(".")[0]
    return (
        root in ("jax", "jaxlib", "jax_plugins")
        or root.startswith(("jax_cuda", "jax_rocm"))
        or name.startswith("lamina_runtime._bridge")
    )


class BridgeError(RuntimeError):
    """jaxlib is not the version Lamina was built and tested against."""


def self_test() -> None:
    """Fail loudly, at import, if jaxlib lacks what Lamina calls."""
    if JAXLIB_VERSION != EXPECTED_JAXLIB:
        raise BridgeError(
            f"lamina-runtime needs jaxlib {EXPECTED_JAXLIB}, found {JAXLIB_VERSION}; "
            f"install the pinned version (pip install jaxlib=={EXPECTED_JAXLIB})"
        )
    needed = {
        _jax: (
            "ArrayImpl",
            "batched_device_put",
            "array_result_handler",
            "HostBufferSemantics",
            "pjit",
            "PjitFunctionCache",
            "pytree",
            "config",
            "collect_garbage",
        ),
        xc: ("CompileOptions", "DeviceList", "DeviceAssignment"),
        DeviceArray: (
            "_replace_with",
            "unsafe_buffer_pointer",
            "is_deleted",
            "_fully_replicated_shard",
        ),
        _jax.pytree.PyTreeRegistry: ("register_dataclass_node", "register_node", "flatten"),
        _jax.config.Config: ("set_global", "get_local", "swap_local"),
    }
    for owner, names in needed.items():
        missing = [n for n in names if not hasattr(owner, n)]
        if missing:
            raise BridgeError(f"jaxlib {JAXLIB_VERSION} lacks {missing} on {owner!r}")


self_test()
