"""The functions of `jax.tree_util` and `jax.tree` that hand treedefs to users, as the public
API (`lamina.tree_util`, `lamina.tree`) has them: their treedefs print as JAX's
(`PyTreeDef(...)`, see `_treedef_text`). Lamina's own code calls `tree_util`'s, which return
optree's treedefs without the copy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from lamina_core.tree import tree_util
from lamina_core.tree._treedef_text import PublicTreeDef, public_treedef
from lamina_core.tree.tree_util import IsLeaf, KeyPath, Leaf, PyTree


def tree_flatten(tree: PyTree, is_leaf: IsLeaf | None = None) -> tuple[list[Leaf], PublicTreeDef]:
    """`tree_util.tree_flatten`, its treedef printing as JAX's."""
    leaves, treedef = tree_util.tree_flatten(tree, is_leaf)
    return leaves, public_treedef(treedef)


def tree_structure(tree: PyTree, is_leaf: IsLeaf | None = None) -> PublicTreeDef:
    """`tree_util.tree_structure`, printing as JAX's."""
    return public_treedef(tree_util.tree_structure(tree, is_leaf))


def tree_flatten_with_path(
    tree: PyTree, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> tuple[list[tuple[KeyPath, Leaf]], PublicTreeDef]:
    """`tree_util.tree_flatten_with_path`, its treedef printing as JAX's."""
    pairs, treedef = tree_util.tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    return pairs, public_treedef(treedef)


def treedef_children(treedef: tree_util.PyTreeDef) -> list[tree_util.PyTreeDef]:
    """`tree_util.treedef_children`, printing as JAX's."""
    return [public_treedef(c) for c in tree_util.treedef_children(treedef)]


def treedef_tuple(treedefs: Iterable[tree_util.PyTreeDef]) -> PublicTreeDef:
    """`tree_util.treedef_tuple`, printing as JAX's."""
    return public_treedef(tree_util.treedef_tuple(treedefs))


# `jax.tree`'s short names for the same.
flatten = tree_flatten
structure = tree_structure
flatten_with_path = tree_flatten_with_path

__all__ = [
    "flatten",
    "flatten_with_path",
    "structure",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_structure",
    "treedef_children",
    "treedef_tuple",
]
