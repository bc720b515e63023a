"""`lamina.scipy.cluster`: the `vq` module, as `jax.scipy.cluster`."""

from lamina.scipy.cluster import vq as vq

__all__ = ["vq"]
