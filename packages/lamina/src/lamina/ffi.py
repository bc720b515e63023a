"""`lamina.ffi`: foreign function targets, as `jax.ffi`.

Targets register with the XLA runtime Lamina shares with JAX; `ffi_call` calls one from a
Lamina program (an `ffi_call` equation, lowered to a `stablehlo.custom_call`), and
`ffi_lowering` / `build_ffi_lowering_function` make lowering rules that call one.
"""

from lamina_runtime.ffi import (
    build_ffi_lowering_function,
    ffi_call,
    ffi_lowering,
    include_dir,
    pycapsule,
    register_ffi_target,
    register_ffi_target_as_batch_partitionable,
    register_ffi_type,
    register_ffi_type_id,
)

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
