"""`lamina.scipy.sparse`: the `linalg` module, as `jax.scipy.sparse`."""

from lamina.scipy.sparse import linalg as linalg

__all__ = ["linalg"]
