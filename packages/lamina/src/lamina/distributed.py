"""`lamina.distributed`: many processes, one program, as `jax.distributed`."""

from lamina_runtime import initialize, is_initialized, shutdown

__all__ = ["initialize", "is_initialized", "shutdown"]
