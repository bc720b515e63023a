"""Pytrees, the bottom of lamina-core: the registry of containers, flattening and unflattening,
paths, and JAX's two public namespaces over them (`tree_util`, `tree`).

Implementation: `_registry` (the registry, on optree's C implementation), `tree_util`
(`jax.tree_util`'s API), `tree` (`jax.tree`'s short names), `_levels` (one level of a tree),
`_treedef_text` (treedefs in JAX's text), `_prefix_errors` (`tree_map`'s structure errors, in
JAX's text), `public` (the functions handing treedefs to users, which print as JAX's).
"""

from lamina_core.tree import public as public
from lamina_core.tree import tree as tree
from lamina_core.tree import tree_util as tree_util
from lamina_core.tree._levels import (
    default_registry as default_registry,
)
from lamina_core.tree._levels import (
    flatten_one_level as flatten_one_level,
)
from lamina_core.tree._levels import (
    flatten_one_level_with_keys as flatten_one_level_with_keys,
)
from lamina_core.tree._levels import (
    is_tree_node as is_tree_node,
)
from lamina_core.tree._prefix_errors import (
    equality_errors as equality_errors,
)
from lamina_core.tree._prefix_errors import (
    equality_errors_pytreedef as equality_errors_pytreedef,
)
from lamina_core.tree._registry import (
    keystr as keystr,
)
from lamina_core.tree._treedef_text import (
    PublicTreeDef as PublicTreeDef,
)
from lamina_core.tree._treedef_text import (
    public_treedef as public_treedef,
)
