"""`lamina.tree`: pytrees, as `jax.tree`."""

from lamina_core.tree.tree import *  # noqa: F403  (this module is the public alias)
