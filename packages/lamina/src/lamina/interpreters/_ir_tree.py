"""`jax.interpreters.mlir.ir_tree_registry`: the trees lowering rules nest IR values and types in.

A rule returns, per output, an IR value or a sequence of them; JAX flattens such nests with a
registry of its own, not the user's pytree registry. Tuples and lists are nodes (and namedtuples,
rebuilt as their type), every other value is a leaf, `None` and dicts included; a type registered
with `register_node` is a node too. This module knows nothing of MLIR: `mlir` registers the
bindings' result lists.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeAlias

ToIterable: TypeAlias = Callable[[Any], tuple[Iterable[Any], Any]]
"""`to_iterable(node)`: the node's children and the data that rebuilds it with them."""
FromIterable: TypeAlias = Callable[[Any, Iterable[Any]], Any]
"""`from_iterable(data, children)`: the node again."""


@dataclass(frozen=True, slots=True)
class IrTreeDef:
    """The shape of a flattened tree: a leaf (`kind` None) or a node with its children."""

    kind: type | None
    data: Any = None
    children: tuple[IrTreeDef, ...] = ()

    @property
    def num_leaves(self) -> int:
        return 1 if self.kind is None else sum(c.num_leaves for c in self.children)

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """The tree of this shape with `leaves` in order.

        Raises:
            ValueError: the number of leaves is not `num_leaves`.
        """
        it = iter(leaves)
        tree = self._build(it)
        if next(it, it) is not it:
            raise ValueError(f"IrTreeDef.unflatten: too many leaves for a tree of {self}")
        return tree

    def _build(self, it: Any) -> Any:
        if self.kind is None:
            leaf = next(it, it)
            if leaf is it:
                raise ValueError(f"IrTreeDef.unflatten: too few leaves for a tree of {self}")
            return leaf
        children = [c._build(it) for c in self.children]
        return _rebuild(self.kind, self.data, children)


def _rebuild(kind: type, data: Any, children: list[Any]) -> Any:
    if kind is tuple:
        return tuple(children)
    if kind is list:
        return children
    if isinstance(data, _Registered):
        return data.from_iterable(data.data, children)
    return kind(*children)  # a namedtuple


@dataclass(frozen=True, slots=True)
class _Registered:
    from_iterable: FromIterable
    data: Any


class IrTreeRegistry:
    """JAX's `PyTreeRegistry` as `mlir.ir_tree_registry` configures it (see the module text)."""

    def __init__(self) -> None:
        self._nodes: dict[type, tuple[ToIterable, FromIterable]] = {}

    def register_node(
        self,
        type_: type,
        to_iterable: ToIterable,
        from_iterable: FromIterable,
        to_iterable_with_keys: Any = None,
    ) -> None:
        """Make `type_` a node, taken apart by `to_iterable` and rebuilt by `from_iterable`."""
        del to_iterable_with_keys  # paths are not part of this registry's trees
        if type_ in self._nodes:
            raise ValueError(f"Duplicate custom PyTreeDef type registration for {type_}.")
        self._nodes[type_] = (to_iterable, from_iterable)

    def is_node(self, type_: type) -> bool:
        return (
            type_ in (tuple, list)
            or type_ in self._nodes
            or (issubclass(type_, tuple) and hasattr(type_, "_fields"))
        )

    def flatten_one_level(self, tree: Any) -> tuple[list[Any], Any] | None:
        """The children of node `tree` and its data, or None for a leaf."""
        kind = type(tree)
        if kind in (tuple, list):
            return list(tree), None
        found = self._nodes.get(kind)
        if found is not None:
            children, data = found[0](tree)
            return list(children), data
        if self.is_node(kind):
            return list(tree), kind
        return None

    def flatten(self, tree: Any) -> tuple[list[Any], IrTreeDef]:
        """The leaves of `tree`, left to right, and its shape."""
        leaves: list[Any] = []
        return leaves, self._flatten(tree, leaves)

    def _flatten(self, tree: Any, leaves: list[Any]) -> IrTreeDef:
        level = self.flatten_one_level(tree)
        if level is None:
            leaves.append(tree)
            return IrTreeDef(None)
        children, data = level
        kind = type(tree)
        found = self._nodes.get(kind)
        if found is not None:
            data = _Registered(found[1], data)
        return IrTreeDef(kind, data, tuple(self._flatten(c, leaves) for c in children))
