"""One level of a pytree: `flatten_one_level`, `is_tree_node` and the registry object that
answers them (`default_registry`), as `jax.tree_util` has them."""

from __future__ import annotations

import collections
from typing import Any

import optree

from lamina_core.tree._registry import NAMESPACE
from lamina_core.tree.tree_util import (
    IsLeaf,
    PyTree,
    PyTreeDef,
    tree_flatten,
    tree_flatten_with_path,
)


def _cannot_flatten(tree: Any) -> ValueError:
    return ValueError(f"can't tree-flatten type: {type(tree)}")


def _metadata(tree: Any, metadata: Any) -> Any:
    # Dict keys are reported as a tuple, as JAX's registry does (optree gives a list).
    if type(tree) is collections.defaultdict:
        factory, keys = metadata
        return factory, tuple(keys)
    if isinstance(tree, dict):
        return tuple(metadata)
    return metadata


def is_tree_node(typ: type) -> bool:
    """Whether `typ` is a pytree node type: built in, a namedtuple, or registered."""
    if optree.register_pytree_node.get(typ, namespace=NAMESPACE) is not None:
        return True
    return optree.is_namedtuple_class(typ) or optree.is_structseq_class(typ)


def flatten_one_level(tree: Any) -> tuple[list[Any], Any]:
    """The children of the node `tree` (not flattened further) and its metadata (dict keys,
    a namedtuple's type, a custom node's auxiliary data)."""
    if not is_tree_node(type(tree)):
        raise _cannot_flatten(tree)
    children, metadata, *_ = optree.tree_flatten_one_level(tree, namespace=NAMESPACE)
    return list(children), _metadata(tree, metadata)


def flatten_one_level_with_keys(tree: Any) -> tuple[list[tuple[Any, Any]], Any]:
    """As `flatten_one_level`, each child paired with its key (`DictKey`, `SequenceKey`, ...)."""
    children, metadata = flatten_one_level(tree)
    pairs, _ = tree_flatten_with_path(tree, is_leaf=lambda x: x is not tree)
    keyed = [(path[0], child) for (path, _), child in zip(pairs, children, strict=True)]
    return keyed, metadata


class PyTreeRegistry:
    """The registry that `lamina.tree_util`'s functions use (`jax.tree_util.default_registry`):
    Lamina's optree namespace, with JAX's registry methods."""

    def flatten(
        self, tree: PyTree, leaf_predicate: IsLeaf | None = None
    ) -> tuple[list[Any], PyTreeDef]:
        return tree_flatten(tree, leaf_predicate)

    def flatten_one_level(self, tree: Any) -> tuple[list[Any], Any] | None:
        """None for a leaf, as JAX's registry method returns."""
        return flatten_one_level(tree) if is_tree_node(type(tree)) else None

    def flatten_one_level_with_keys(self, tree: Any) -> tuple[list[tuple[Any, Any]], Any] | None:
        return flatten_one_level_with_keys(tree) if is_tree_node(type(tree)) else None

    def is_node(self, typ: type) -> bool:
        return is_tree_node(typ)

    def __repr__(self) -> str:
        return f"<PyTreeRegistry namespace={NAMESPACE!r}>"


default_registry = PyTreeRegistry()
