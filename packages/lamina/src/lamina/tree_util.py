"""`lamina.tree_util`: pytrees, as `jax.tree_util`."""

from lamina_core.tree import default_registry as default_registry
from lamina_core.tree import flatten_one_level as flatten_one_level
from lamina_core.tree import flatten_one_level_with_keys as flatten_one_level_with_keys
from lamina_core.tree import is_tree_node as is_tree_node
from lamina_core.tree.tree_util import *  # noqa: F403  (this module is the public alias)
