"""`lamina.scipy.cluster.vq`: `vq`, as `jax.scipy.cluster.vq` (see
`lamina_core.scipy.cluster.vq`)."""

from lamina_core.scipy.cluster.vq import vq

__all__ = ["vq"]
