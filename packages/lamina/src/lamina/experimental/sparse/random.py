"""`jax.experimental.sparse.random`: `random_bcoo`."""

from lamina_core.sparse import random_bcoo

__all__ = ["random_bcoo"]
