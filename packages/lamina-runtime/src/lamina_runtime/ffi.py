"""Foreign function targets, as `jax.ffi`: registering compiled handlers with XLA, and
calling them from Lamina programs.

Registration goes to the XLA runtime Lamina shares with JAX. `ffi_call` (lamina-core's
`ffi_call` primitive) calls a target from a traced program; lamina-mlir lowers it to a
`stablehlo.custom_call`, and its `ffi_lowering` / `build_ffi_lowering_function` make such
lowering rules for a library's own primitives.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

from lamina_core.callbacks import ffi_call
from lamina_mlir import build_ffi_lowering_function, ffi_lowering
from lamina_runtime import _bridge_tools


def register_ffi_target(
    name: str, fn: Any, platform: str = "cpu", api_version: int = 1, **kwargs: Any
) -> None:
    """Register `fn` (a PyCapsule of the handler, or a dict of them by FFI stage) as the
    custom call target `name` on `platform`; `api_version` 1 is the typed FFI, 0 the old
    custom-call API."""
    _bridge_tools.register_custom_call_target(name, fn, platform, api_version, **kwargs)


def register_ffi_type_id(name: str, obj: Any, platform: str = "cpu") -> None:
    """Removed from XLA: raises as JAX does."""
    raise ValueError("register_ffi_type_id is not supported after jaxlib version 381.")


def register_ffi_type(name: str, type_registration: Any, platform: str = "cpu") -> None:
    """Register a custom FFI type (`{"type_id": capsule, "type_info": capsule}`)."""
    _bridge_tools.register_custom_type(name, type_registration, platform)


def register_ffi_target_as_batch_partitionable(name: str) -> None:
    """Let XLA partition calls of target `name` along their batch dimensions."""
    _bridge_tools.register_custom_call_as_batch_partitionable(name)


def pycapsule(funcptr: Any) -> Any:
    """A PyCapsule around a ctypes function pointer, to register as a target."""
    destructor = ctypes.CFUNCTYPE(None, ctypes.py_object)
    builder = ctypes.pythonapi.PyCapsule_New
    builder.restype = ctypes.py_object
    builder.argtypes = (ctypes.c_void_p, ctypes.c_char_p, destructor)
    return builder(funcptr, None, destructor(0))


def include_dir() -> str:
    """The folder of the C++ headers (XLA's FFI API) bundled with jaxlib."""
    return os.path.join(_bridge_tools.jaxlib_folder(), "include")


__all__ = [
    "build_ffi_lowering_function",
    "ffi_call",
    "ffi_lowering",
    "include_dir",
    "pycapsule",
    "register_ffi_target",
    "register_ffi_target_as_batch_partitionable",
    "register_ffi_type",
    "register_ffi_type_id",
]
