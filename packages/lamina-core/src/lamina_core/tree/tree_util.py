"""Pytrees: JAX's `jax.tree_util` API on top of optree's C implementation.

A pytree is a nested structure of registered containers (tuples, lists, dicts, namedtuples,
`OrderedDict`, `defaultdict`, `None` and user types registered here) whose non-container parts are
leaves. Invariants:

- Every registration and every flatten uses Lamina's own optree namespace, with `None` an empty
  subtree (optree's `none_is_leaf=False`), so other optree users never see Lamina's types.
- Leaves come out in JAX's order: left to right, dict keys sorted, `OrderedDict` in insertion
  order. Key paths use JAX's key classes (`SequenceKey`, `DictKey`, `GetAttrKey`,
  `FlattenedIndexKey`) with JAX's `str`/`repr`.
- `tree_flatten`/`tree_unflatten` call optree's C functions with no per-leaf Python work: they run
  on every traced call.

Known differences from JAX, all inherited from optree and too costly to paper over:

- `collections.deque` and `PyStructSequence` types (`os.stat_result`, ...) are pytree nodes; in JAX
  they are leaves.
- `tree_unflatten` rebuilds a dict in the key order of the tree that was flattened, where JAX
  rebuilds it sorted; the dicts compare equal, and so do the treedefs.
- Dict keys that cannot be sorted (`{1: ..., "a": ...}`) fall back to optree's ordering instead of
  raising.
- `PyTreeDef` is optree's `PyTreeSpec`: treedefs made here print as `PyTreeSpec(...)`. The
  public API (`lamina.tree_util`, `lamina.tree`) hands out copies that print as JAX's
  (`PyTreeDef(...)`, `tree.public`), and messages name structures in JAX's text
  (`treedef_repr`); copying on every flatten would slow tracing.

This module knows nothing of arrays, tracing or JAX.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, Literal, TypeAlias, TypeVar, cast

from optree import _C  # the C entry points, called directly: the public wrappers add a frame

from lamina_core.tree._prefix_errors import prefix_error
from lamina_core.tree._registry import (
    NAMESPACE,
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    KeyEntry,
    KeyPath,
    Partial,
    PyTreeDef,
    SequenceKey,
    key_paths,
    keystr,
    on_node_registered,
    register_dataclass,
    register_pytree_node,
    register_pytree_node_class,
    register_pytree_with_keys,
    register_pytree_with_keys_class,
    register_static,
)
from lamina_core.tree._treedef_text import treedef_repr

__all__ = [
    "DictKey",
    "FlattenedIndexKey",
    "GetAttrKey",
    "KeyEntry",
    "KeyPath",
    "Leaf",
    "Partial",
    "PyTree",
    "PyTreeDef",
    "SequenceKey",
    "all_leaves",
    "build_tree",
    "keystr",
    "on_node_registered",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
    "register_pytree_with_keys",
    "register_pytree_with_keys_class",
    "register_static",
    "tree_all",
    "tree_broadcast",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_map",
    "tree_map_with_path",
    "tree_reduce",
    "tree_reduce_associative",
    "tree_structure",
    "tree_transpose",
    "tree_unflatten",
    "treedef_children",
    "treedef_is_leaf",
    "treedef_repr",
    "treedef_tuple",
]

T = TypeVar("T")

Leaf: TypeAlias = Any
PyTree: TypeAlias = Any
IsLeaf: TypeAlias = Callable[[Any], bool]

_flatten: Final = _C.flatten


# ---------------------------------------------------------------------------------------------
# Flattening and mapping


def tree_flatten(tree: PyTree, is_leaf: IsLeaf | None = None) -> tuple[list[Leaf], PyTreeDef]:
    """Flattens a pytree into its leaves and its structure.

    Args:
        tree: the pytree.
        is_leaf: called on every subtree before it is flattened; `True` makes it a leaf.

    Returns:
        The leaves, left to right with dict keys sorted, and the treedef to rebuild the tree.

    Example:
        >>> tree_flatten({"b": 1, "a": (2, None)})[0]
        [2, 1]
    """
    return _flatten(tree, is_leaf, False, NAMESPACE)


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Leaf]) -> PyTree:
    """Rebuilds a pytree of structure `treedef` from `leaves` (the inverse of `tree_flatten`)."""
    return treedef.unflatten(leaves)


def tree_leaves(tree: PyTree, is_leaf: IsLeaf | None = None) -> list[Leaf]:
    """The leaves of `tree`, in `tree_flatten`'s order."""
    return _flatten(tree, is_leaf, False, NAMESPACE)[0]


def tree_structure(tree: PyTree, is_leaf: IsLeaf | None = None) -> PyTreeDef:
    """The treedef of `tree`, as `tree_flatten` returns it."""
    return _flatten(tree, is_leaf, False, NAMESPACE)[1]


def tree_map(
    f: Callable[..., Any], tree: PyTree, *rest: PyTree, is_leaf: IsLeaf | None = None
) -> PyTree:
    """Applies `f` leafwise and rebuilds the tree.

    Args:
        f: called as `f(x, *xs)` for each leaf `x` of `tree`, where `xs` are the subtrees of
            `rest` at the same position.
        tree: the pytree whose structure the result has.
        *rest: pytrees that each have `tree`'s structure as a prefix.
        is_leaf: as in `tree_flatten`, applied to `tree` only.

    Returns:
        A pytree with `tree`'s structure and `f`'s results as leaves.

    Raises:
        ValueError: if some tree in `rest` lacks `tree`'s structure; the message gives the key
            path of the first difference and what differs there.
    """
    leaves, treedef = _flatten(tree, is_leaf, False, NAMESPACE)
    if not rest:
        return treedef.unflatten(map(f, leaves))
    others = _flatten_up_to_each("tree_map tree", treedef, tree, rest, _plain(is_leaf))
    return treedef.unflatten(map(f, leaves, *others))


def tree_flatten_with_path(
    tree: PyTree, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> tuple[list[tuple[KeyPath, Leaf]], PyTreeDef]:
    """Like `tree_flatten`, but pairs each leaf with its key path.

    Args:
        tree: the pytree.
        is_leaf: as in `tree_flatten`; called as `is_leaf(path, x)` if `is_leaf_takes_path`.
        is_leaf_takes_path: see `is_leaf`.

    Returns:
        `(key_path, leaf)` pairs in leaf order, and the treedef.

    Example:
        >>> [keystr(p) for p, _ in tree_flatten_with_path({"a": [1, 2]})[0]]
        ["['a'][0]", "['a'][1]"]
    """
    if is_leaf is not None and is_leaf_takes_path:
        return _flatten_with_path_predicate(tree, is_leaf)
    leaves, treedef = _flatten(tree, is_leaf, False, NAMESPACE)
    return list(zip(key_paths(treedef), leaves, strict=True)), treedef


def tree_leaves_with_path(
    tree: PyTree, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> list[tuple[KeyPath, Leaf]]:
    """The `(key_path, leaf)` pairs of `tree_flatten_with_path`."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(
    f: Callable[..., Any],
    tree: PyTree,
    *rest: PyTree,
    is_leaf: Callable[..., bool] | None = None,
    is_leaf_takes_path: bool = False,
) -> PyTree:
    """Like `tree_map`, but calls `f(key_path, x, *xs)`."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    paths = [p for p, _ in pairs]
    leaves = [x for _, x in pairs]
    leaf_at = is_leaf if is_leaf_takes_path else _plain(is_leaf)
    others = _flatten_up_to_each("tree_map_with_path tree", treedef, tree, rest, leaf_at)
    return treedef.unflatten(map(f, paths, leaves, *others))


def _flatten_with_path_predicate(
    tree: PyTree, is_leaf: Callable[[KeyPath, Any], bool]
) -> tuple[list[tuple[KeyPath, Leaf]], PyTreeDef]:
    # optree's predicate never sees paths, so walk in Python, rebuilding the tree with each leaf
    # boxed; flattening the boxed copy yields the treedef. Rare, so not worth a faster scheme.
    pairs: list[tuple[KeyPath, Leaf]] = []

    def boxed(path: KeyPath, node: Any) -> Any:
        if is_leaf(path, node) or _C.is_leaf(node, None, False, NAMESPACE):
            pairs.append((path, node))
            return _Box(node)
        children, keys, node_def = _one_level(node)
        return node_def.unflatten(
            [boxed((*path, k), c) for k, c in zip(keys, children, strict=True)]
        )

    return pairs, _flatten(boxed((), tree), None, False, NAMESPACE)[1]


@dataclasses.dataclass(frozen=True, slots=True)
class _Box:
    """An unregistered (hence leaf) stand-in for a leaf while a treedef is built."""

    value: Any


# ---------------------------------------------------------------------------------------------
# Structure mismatches


def _plain(is_leaf: IsLeaf | None) -> Callable[[KeyPath, Any], bool] | None:
    return None if is_leaf is None else (lambda _, x: is_leaf(x))


def _one_level(node: Any) -> tuple[list[Any], list[KeyEntry], PyTreeDef]:
    """The children of a non-leaf node, their keys, and the node's one-level treedef."""
    children, node_def = _flatten(node, lambda x: x is not node, False, NAMESPACE)
    return children, [path[0] for path in key_paths(node_def)], node_def


def _flatten_up_to_each(
    name: str,
    treedef: PyTreeDef,
    tree: PyTree,
    rest: Sequence[PyTree],
    is_leaf: Callable[[KeyPath, Any], bool] | None,
) -> list[list[Any]]:
    """Each of `rest` cut at `treedef`'s leaves, with JAX's strictness and JAX's error, which
    calls `tree` by `name` ("tree_map tree")."""
    out = []
    for other in rest:
        # Fast path, all in C: `other` has exactly the structure of `tree`. optree's
        # flatten_up_to is not enough alone: it lets a dict stand for an OrderedDict or
        # defaultdict and ignores OrderedDict order, which JAX rejects, so other cases walk.
        other_leaves, other_def = _flatten(other, None, False, NAMESPACE)
        if other_def == treedef:
            out.append(other_leaves)
            continue
        error = prefix_error(tree, other, is_leaf)
        if error is not None:
            raise error(name) from None
        out.append(treedef.flatten_up_to(other))
    return out


# ---------------------------------------------------------------------------------------------
# Reductions and restructuring


class _Unset(enum.Enum):
    UNSET = enum.auto()


_UNSET: Final = _Unset.UNSET


def tree_reduce(
    function: Callable[[T, Any], T],
    tree: PyTree,
    initializer: T | Literal[_Unset.UNSET] = _UNSET,
    is_leaf: IsLeaf | None = None,
) -> T:
    """Folds `function` over the leaves, left to right, as `functools.reduce` does.

    Raises:
        TypeError: if the tree has no leaves and no `initializer` is given.
    """
    leaves = _flatten(tree, is_leaf, False, NAMESPACE)[0]
    result: T = (
        functools.reduce(function, leaves)
        if initializer is _UNSET
        else functools.reduce(function, leaves, initializer)
    )
    return result


def tree_reduce_associative(
    operation: Callable[[T, T], T],
    tree: PyTree,
    *,
    identity: T | Literal[_Unset.UNSET] = _UNSET,
    is_leaf: IsLeaf | None = None,
) -> T:
    """Reduces the leaves with an associative `operation` as a balanced tree of calls.

    The leaves are split in halves (the first half the shorter), each reduced, then combined,
    so the call depth is logarithmic in the number of leaves.

    Raises:
        TypeError: if the tree has no leaves and no `identity` is given.
    """
    leaves = _flatten(tree, is_leaf, False, NAMESPACE)[0]
    if not leaves:
        if identity is _UNSET:
            raise TypeError("tree_reduce_associative of a tree with no leaves needs an identity")
        return identity

    def reduce(lo: int, hi: int) -> T:
        if hi - lo == 1:
            return cast(T, leaves[lo])
        mid = (lo + hi) // 2
        return operation(reduce(lo, mid), reduce(mid, hi))

    return reduce(0, len(leaves))


def tree_all(tree: PyTree, *, is_leaf: IsLeaf | None = None) -> bool:
    """Whether every leaf is truthy."""
    return all(_flatten(tree, is_leaf, False, NAMESPACE)[0])


def tree_transpose(
    outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose: PyTree
) -> PyTree:
    """Turns an outer-of-inner tree into an inner-of-outer tree.

    Args:
        outer_treedef: the structure of the outer tree.
        inner_treedef: the structure of each inner tree; `None` takes the structure of the first.
        pytree_to_transpose: a tree of structure `outer_treedef` composed with `inner_treedef`.

    Returns:
        A tree of structure `inner_treedef` whose leaves are trees of structure `outer_treedef`.

    Raises:
        TypeError: if the tree's leaf count is not the product of the two structures'.

    Example:
        >>> tree_transpose(tree_structure([0, 0]), None, [(1, 2), (3, 4)])
        ([1, 3], [2, 4])
    """
    leaves, treedef = _flatten(pytree_to_transpose, None, False, NAMESPACE)
    if inner_treedef is None:
        first = outer_treedef.flatten_up_to(pytree_to_transpose)[0]
        inner_treedef = _flatten(first, None, False, NAMESPACE)[1]
    n_inner, n_outer = inner_treedef.num_leaves, outer_treedef.num_leaves
    if treedef.num_leaves != n_inner * n_outer:
        raise TypeError(
            f"tree_transpose: the tree has structure {treedef} with {treedef.num_leaves} leaves, "
            f"but outer {outer_treedef} of inner {inner_treedef} has {n_inner * n_outer}: "
            f"expected {outer_treedef.compose(inner_treedef)}"
        )
    columns = [leaves[j::n_inner] for j in range(n_inner)]
    return inner_treedef.unflatten([outer_treedef.unflatten(col) for col in columns])


def tree_broadcast(prefix_tree: PyTree, full_tree: PyTree, is_leaf: IsLeaf | None = None) -> PyTree:
    """Repeats each leaf of `prefix_tree` over the matching subtree of `full_tree`.

    Raises:
        ValueError: if `prefix_tree`'s structure is not a prefix of `full_tree`'s.

    Example:
        >>> tree_broadcast((1, 2), (0, {"a": 0, "b": 0}))
        (1, {'a': 2, 'b': 2})
    """
    leaves, treedef = _flatten(prefix_tree, is_leaf, False, NAMESPACE)
    (subtrees,) = _flatten_up_to_each(
        "broadcast_prefix prefix_tree", treedef, prefix_tree, [full_tree], _plain(is_leaf)
    )
    out = []
    for leaf, subtree in zip(leaves, subtrees, strict=True):
        out.extend([leaf] * _flatten(subtree, None, False, NAMESPACE)[1].num_leaves)
    return _flatten(full_tree, None, False, NAMESPACE)[1].unflatten(out)


def all_leaves(iterable: Iterable[Any], is_leaf: IsLeaf | None = None) -> bool:
    """Whether every element of `iterable` is a leaf (`None`, an empty subtree, is not)."""
    if is_leaf is None:
        return all(_C.is_leaf(x, None, False, NAMESPACE) for x in iterable)
    items: Any = list(iterable)  # Any: optree's PyTree parameter type rejects a plain list
    leaves = _flatten(items, is_leaf, False, NAMESPACE)[0]
    return len(leaves) == len(items) and all(a is b for a, b in zip(items, leaves, strict=True))


def build_tree(treedef: PyTreeDef, xs: Any) -> PyTree:
    """Builds a tree of structure `treedef` from nested iterables (JAX has since dropped it).

    Each node of `treedef` takes an iterable with one item per child; each leaf takes its item
    as is.

    Example:
        >>> build_tree(tree_structure({"a": 0, "b": (0, 0)}), [1, [2, 3]])
        {'a': 1, 'b': (2, 3)}

    Raises:
        ValueError: if an iterable's length differs from its node's number of children.
    """
    if treedef.is_leaf():
        return xs
    children = treedef.children()
    items = list(xs)
    if len(items) != len(children):
        raise ValueError(
            f"build_tree: {treedef} has {len(children)} children at its root, got {len(items)}"
        )
    node_def = cast(PyTreeDef, treedef.one_level())  # only leaves have no one-level treedef
    return node_def.unflatten(build_tree(c, x) for c, x in zip(children, items, strict=True))


# ---------------------------------------------------------------------------------------------
# Treedefs


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether `treedef` is a single node: a leaf, `None` or an empty container."""
    return treedef.num_nodes == 1


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The treedefs of the root's children."""
    return treedef.children()


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The treedef of a tuple whose children have the given treedefs."""
    return _C.make_from_collection(tuple(treedefs), False, NAMESPACE)
