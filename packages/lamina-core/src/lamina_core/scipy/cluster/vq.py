"""`jax.scipy.cluster.vq` for Lamina: `vq` (see `lamina_core.scipy._cluster`)."""

from lamina_core.scipy._cluster import vq

__all__ = ["vq"]
