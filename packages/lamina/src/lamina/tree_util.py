"""`lamina.tree_util`: pytrees, as `jax.tree_util`."""

from lamina_core.tree import default_registry as default_registry
from lamina_core.tree import flatten_one_level as flatten_one_level
from lamina_core.tree import flatten_one_level_with_keys as flatten_one_level_with_keys
from lamina_core.tree import is_tree_node as is_tree_node
from lamina_core.tree import public as _public
from lamina_core.tree.tree_util import *  # noqa: F403  (this module is the public alias)

# The functions handing treedefs to users give ones that print as JAX's (`PyTreeDef(...)`).
tree_flatten = _public.tree_flatten
tree_flatten_with_path = _public.tree_flatten_with_path
tree_structure = _public.tree_structure
treedef_children = _public.treedef_children
treedef_tuple = _public.treedef_tuple
