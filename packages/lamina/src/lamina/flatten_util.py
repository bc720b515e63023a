"""`lamina.flatten_util`: a pytree as one flat vector, as `jax.flatten_util`."""

from lamina_core.flatten_util import ravel_pytree as ravel_pytree

__all__ = ["ravel_pytree"]
