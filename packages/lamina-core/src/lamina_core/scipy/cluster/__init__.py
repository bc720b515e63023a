"""`jax.scipy.cluster` for Lamina: the `vq` module."""

from lamina_core.scipy.cluster import vq as vq

__all__ = ["vq"]
