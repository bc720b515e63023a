"""`lamina.tree_util`: pytrees, as `jax.tree_util`."""

from lamina_core.tree_util import *  # noqa: F403  (this module is the public alias)
