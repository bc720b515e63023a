"""`jax.custom_batching`: functions with user-defined vmap rules (`custom_vmap`) and the
one-example-at-a-time rule (`sequential_vmap`)."""

from lamina_core.custom_derivatives import custom_vmap, sequential_vmap

__all__ = [
    "custom_vmap",
    "sequential_vmap",
]
