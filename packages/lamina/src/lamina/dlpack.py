"""`lamina.dlpack`: other libraries' tensors as Lamina arrays, as `jax.dlpack`."""

from lamina_runtime.dlpack import from_dlpack, is_supported_dtype

__all__ = ["from_dlpack", "is_supported_dtype"]
