"""Pytrees, the bottom of lamina-core: the registry of containers, flattening and unflattening,
paths, and JAX's two public namespaces over them (`tree_util`, `tree`).

Implementation: `_registry` (the registry, on optree's C implementation), `tree_util`
(`jax.tree_util`'s API), `tree` (`jax.tree`'s short names), `_levels` (one level of a tree).
"""

from lamina_core.tree import tree, tree_util
