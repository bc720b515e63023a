"""`jax.scipy.sparse` for Lamina: the `linalg` module."""

from lamina_core.scipy.sparse import linalg as linalg

__all__ = ["linalg"]
