"""`lamina.numpy.linalg`: linear algebra as `jax.numpy.linalg` (see `lamina_core.numpy.linalg`)."""

from lamina_core.numpy.linalg import norm, vector_norm

__all__ = ["norm", "vector_norm"]
