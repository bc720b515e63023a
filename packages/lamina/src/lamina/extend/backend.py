"""`jax.extend.backend`: the backend clients Lamina runs on, and clearing what was compiled
for them (see `lamina_runtime.backend_api`).

The clients are jaxlib's PJRT clients from JAX's backend registry, the same ones Lamina's
devices belong to; `clear_backends` and `clear_in_memory_compilation_cache` empty Lamina's
caches as JAX's empty JAX's, and `register_backend_cache` adds a cache to those
`lamina.clear_caches()` empties.
"""

from lamina_runtime import (
    backend_xla_version,
    backends,
    clear_backends,
    clear_in_memory_compilation_cache,
    get_backend,
    get_compile_options,
    get_default_device,
    ifrt_proxy,
    register_backend_cache,
    register_backend_factory,
)

__all__ = [
    "backend_xla_version",
    "backends",
    "clear_backends",
    "clear_in_memory_compilation_cache",
    "get_backend",
    "get_compile_options",
    "get_default_device",
    "ifrt_proxy",
    "register_backend_cache",
    "register_backend_factory",
]
