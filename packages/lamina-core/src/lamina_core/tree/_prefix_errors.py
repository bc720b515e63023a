"""Why one pytree is not a prefix of another, in JAX's words (`tree_map`'s error).

`prefix_error` walks both trees from the root and describes the first place they part: types
that differ, sequences of different lengths, nodes with different numbers of children or
different metadata (dict keys, a custom node's auxiliary data). The text is JAX's
("pytree structure error: different types at key path ...").
"""

from __future__ import annotations

import collections
import difflib
import textwrap
from collections.abc import Callable, Iterator
from typing import Any, Final, TypeAlias

from optree import _C

from lamina_core.tree._registry import NAMESPACE, KeyEntry, KeyPath, key_paths, keystr

ErrorMaker: TypeAlias = Callable[[str], ValueError]
"""Given the name of the prefix tree as the message shows it (`"tree_map tree"`), the error."""
PathLeaf: TypeAlias = Callable[[KeyPath, Any], bool]


def prefix_error(
    prefix_tree: Any, full_tree: Any, is_leaf: PathLeaf | None = None
) -> ErrorMaker | None:
    """The first reason `prefix_tree` is not a prefix of `full_tree`, or None if it is one."""
    return next(_errors((), prefix_tree, full_tree, is_leaf), None)


def _one_level(node: Any) -> tuple[list[Any], list[KeyEntry], Any]:
    """A node's children, their keys, and its metadata as JAX's `flatten_one_level` gives it."""
    children, node_def = _C.flatten(node, lambda x: x is not node, False, NAMESPACE)
    keys = [path[0] for path in key_paths(node_def)]
    metadata: Any = node_def.walk([None] * len(children), lambda _t, data, _c: data, None)
    if type(node) is collections.defaultdict:
        metadata = (metadata[0], tuple(metadata[1]))
    elif isinstance(node, dict):
        metadata = tuple(metadata)
    elif type(node) in (list, tuple):
        metadata = None
    return children, keys, metadata


def _key_text(key: KeyEntry) -> str:
    return str(getattr(key, "key", getattr(key, "name", key)))


def _errors(
    path: KeyPath, prefix: Any, full: Any, is_leaf: PathLeaf | None
) -> Iterator[ErrorMaker]:
    at = keystr(path)
    # A leaf is a prefix of anything (None is not a leaf: a node without children).
    if (is_leaf is not None and is_leaf(path, prefix)) or _C.is_leaf(
        prefix, None, False, NAMESPACE
    ):
        return
    if type(prefix) is not type(full):
        yield lambda name: ValueError(
            f"pytree structure error: different types at key path\n    {name}{at}\n"
            f"At that key path, the prefix pytree {name} has a subtree of type\n"
            f"    {type(prefix)}\n"
            f"but at the same key path the full pytree has a subtree of different type\n"
            f"    {type(full)}."
        )
        return
    p_children, p_keys, p_meta = _one_level(prefix)
    f_children, f_keys, f_meta = _one_level(full)
    if isinstance(prefix, list | tuple):
        if len(prefix) != len(full):
            kind = type(prefix).__name__
            yield lambda name: ValueError(
                f"pytree structure error: different lengths of {kind} at key path\n"
                f"    {name}{at}\n"
                f"At that key path, the prefix pytree {name} has a subtree of type {kind} of "
                f"length {len(prefix)}, but the full pytree has a subtree of the same type but "
                f"of length {len(full)}."
            )
            return
    elif len(p_children) != len(f_children):
        try:
            diff: set[Any] | None = set(p_keys).symmetric_difference(f_keys)
        except TypeError:  # unhashable keys: no set difference to show
            diff = None
        shown = "" if diff is None else " ".join(_key_text(k) for k in diff)
        yield lambda name: ValueError(
            f"pytree structure error: different numbers of pytree children at key path\n"
            f"    {name}{at}\n"
            f"At that key path, the prefix pytree {name} has a subtree of type\n"
            f"    {type(prefix)}\n"
            f"with {len(p_children)} child keys\n"
            f"    {' '.join(_key_text(k) for k in p_keys)}\n"
            f"but at the same key path the full pytree has a subtree of the same type but "
            f"with {len(f_children)} child keys\n"
            f"    {' '.join(_key_text(k) for k in f_keys)}\n"
            + ("" if diff is None else f"so the symmetric difference on key sets is\n    {shown}")
        )
        return
    if p_meta != f_meta:
        p_text, f_text = str(p_meta), str(f_meta)
        ndiff = difflib.ndiff(p_text.splitlines(), f_text.splitlines())
        meta_diff = textwrap.indent("\n".join(ndiff), prefix="    ")
        yield lambda name: ValueError(
            f"pytree structure error: different pytree metadata at key path\n"
            f"    {name}{at}\n"
            f"At that key path, the prefix pytree {name} has a subtree of type\n"
            f"    {type(prefix)}\n"
            f"with metadata\n    {p_text}\n"
            f"but at the same key path the full pytree has a subtree of the same type but "
            f"with metadata\n    {f_text}\n"
            f"so the diff in the metadata at these pytree nodes is\n{meta_diff}"
        )
        return
    for key, p_child, f_child in zip(p_keys, p_children, f_children, strict=True):
        yield from _errors((*path, key), p_child, f_child, is_leaf)


# ---- structural equality: every place two trees part, as JAX's `equality_errors` -------------


class _Leaf(type):
    """The stand-in leaf of `equality_errors_pytreedef`: its class prints `pytree leaf`."""

    def __repr__(cls) -> str:
        return "pytree leaf"


_LEAF: Final = _Leaf("Leaf", (), {})()


def equality_errors(tree1: Any, tree2: Any) -> Iterator[tuple[KeyPath, str, str, str]]:
    """Where `tree1` and `tree2` differ in structure: `(path, thing1, thing2, explanation)`
    for each place, in JAX's words ("their Python types differ", "the lengths do not match",
    ...); nothing below a place is looked at."""
    yield from _equality_errors((), tree1, tree2)


def equality_errors_pytreedef(tree1: Any, tree2: Any) -> Iterator[tuple[KeyPath, str, str, str]]:
    """`equality_errors` of two treedefs, their leaves described as `pytree leaf`."""
    return equality_errors(
        tree1.unflatten([_LEAF] * tree1.num_leaves), tree2.unflatten([_LEAF] * tree2.num_leaves)
    )


def _is_leaf(x: Any) -> bool:
    return bool(_C.is_leaf(x, None, False, NAMESPACE))


def _children_text(kind: type, n: int) -> str:
    return f"{kind} with {n} child{'ren' if n > 1 else ''}"


def _equality_errors(path: KeyPath, t1: Any, t2: Any) -> Iterator[tuple[KeyPath, str, str, str]]:
    if _is_leaf(t1) and _is_leaf(t2):
        return
    if type(t1) is not type(t2):
        yield path, str(type(t1)), str(type(t2)), "their Python types differ"
        return
    if isinstance(t1, list | tuple) and len(t1) != len(t2):
        kind = type(t1).__name__
        yield (
            path,
            f"{kind} of length {len(t1)}",
            f"{kind} of length {len(t2)}",
            ("the lengths do not match"),
        )
        return
    c1, k1, m1 = _one_level(t1)
    c2, k2, m2 = _one_level(t2)
    if len(c1) != len(c2):
        try:
            diff = " ".join(repr(getattr(k, "key", k)) for k in set(k1).symmetric_difference(k2))
        except TypeError:  # unhashable keys: no set difference to show
            diff = ""
        shown = f", with the symmetric difference of key sets: {{{diff}}}" if diff else ""
        yield (
            path,
            _children_text(type(t1), len(c1)),
            _children_text(type(t2), len(c2)),
            ("the numbers of children do not match" + shown),
        )
        return
    if m1 != m2:
        yield (
            path,
            f"{type(t1)} with pytree metadata {m1}",
            (f"{type(t2)} with pytree metadata {m2}"),
            "the pytree node metadata does not match",
        )
        return
    for key, child1, child2 in zip(k1, c1, c2, strict=True):
        yield from _equality_errors((*path, key), child1, child2)
