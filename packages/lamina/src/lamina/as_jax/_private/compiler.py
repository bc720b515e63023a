"""`jax._src.compiler` under `lamina.as_jax`: the functions through which Lamina's runtime
makes every XLA compilation while the alias is on, so that a library that replaces one of them
(chex's `restrict_backends` wraps `backend_compile_and_load` to refuse some platforms) sees each
compilation, with the backend client compiling it (its `.platform`), and may refuse it.

The runtime's compile interceptor (`lamina_runtime.set_compile_interceptor`, set by the alias)
calls `compile_through_module`, which reads `backend_compile_and_load` from this module at each
compilation; that calls `backend_compile` the same way, so a wrapper of either name sees every
compilation (JAX 0.10.2 has only the first; older releases, and libraries written for them,
used the second). The arguments are JAX's; the program is Lamina's (`lamina_runtime.CompileCall`)
and is all these functions accept. Persistent-cache hits are not compilations, as in JAX.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import lamina_runtime


def backend_compile_and_load(
    backend: Any,
    module: lamina_runtime.CompileCall,
    executable_devices: Sequence[Any],
    options: Any,
    host_callbacks: Sequence[Any],
) -> Any:
    """Compile `module` for `executable_devices` with `options`: the loaded executable.

    Raises:
        TypeError: `module` is not a program Lamina's runtime handed over.
    """
    # Through the module's attribute, read now: a library's wrapper of it is called.
    return backend_compile(backend, module, executable_devices, options, host_callbacks)


def backend_compile(
    backend: Any,
    module: lamina_runtime.CompileCall,
    executable_devices: Sequence[Any],
    options: Any,
    host_callbacks: Sequence[Any],
) -> Any:
    """`backend_compile_and_load` under its name in older JAX releases; the one that compiles."""
    if not isinstance(module, lamina_runtime.CompileCall):
        raise TypeError(
            "lamina.as_jax: jax._src.compiler compiles the programs Lamina's runtime hands it "
            f"(a lamina_runtime.CompileCall), not {type(module).__name__}"
        )
    call = dataclasses.replace(
        module,
        devices=tuple(executable_devices),
        options=options,
        host_callbacks=tuple(host_callbacks),
    )
    return call.compile()


def compile_through_module(call: lamina_runtime.CompileCall) -> Any:
    """The runtime's compile interceptor while the alias is on."""
    # The global is read at each call: it is whatever a library has set on this module.
    return backend_compile_and_load(
        call.backend, call, call.devices, call.options, call.host_callbacks
    )
