"""Pytree structures as small JSON values, for saved artifacts: no pickle, no code.

Only the standard containers are encoded: tuples, lists, dicts with `str` or `int` keys, and
`None`; a leaf is `"*"`. Anything else (namedtuples, dataclasses, registered classes) would need
its class imported by name when loading, which is code execution from a file; such structures
are refused when saving, where the error can name the culprit, instead of when loading.

    leaf   -> "*"
    None   -> null
    tuple  -> {"tuple": [child, ...]}
    list   -> {"list": [child, ...]}
    dict   -> {"dict": [[key, child], ...]}     (keys: JSON strings or integers)

Structures nest at most `MAX_DEPTH` containers deep, both ways: deeper ones are refused when
saving, and a file that claims one is refused when loading (a clear error, not a
RecursionError).
"""

from __future__ import annotations

import reprlib
from typing import Any, Final

from lamina_core import tree_util

MAX_DEPTH: Final = 100
"""How deeply containers may nest in a saved structure."""


class TreeCodecError(ValueError):
    """A structure that a saved artifact cannot hold, or a malformed encoding."""


class _Leaf:
    """The placeholder leaf while encoding and decoding. Identity is intended."""


_LEAF: Final = _Leaf()

JsonTree = Any
"""`"*"`, None, or a one-key dict as in the module docstring."""


def encode_treedef(treedef: Any, what: str = "value") -> JsonTree:
    """The JSON description of `treedef`.

    Raises:
        TreeCodecError: the structure holds a container other than tuple, list, dict or None.
    """
    sample = tree_util.tree_unflatten(treedef, [_LEAF] * treedef.num_leaves)
    return _encode(sample, what, 0)


def _encode(node: Any, path: str, depth: int) -> JsonTree:
    kind = type(node)
    if node is _LEAF:
        return "*"
    if node is None:
        return None
    if depth >= MAX_DEPTH:
        raise TreeCodecError(
            f"{path} nests containers more than {MAX_DEPTH} deep, more than saved functions hold"
        )
    if kind is tuple or kind is list:
        children = [_encode(c, f"{path}[{i}]", depth + 1) for i, c in enumerate(node)]
        return {kind.__name__: children}
    if kind is dict:
        items = []
        for k, v in node.items():
            if type(k) not in (str, int):
                raise TreeCodecError(
                    f"{path} is a dict with a {type(k).__name__} key ({k!r}); saved functions "
                    "take and return dicts with str or int keys only"
                )
            items.append([k, _encode(v, f"{path}[{k!r}]", depth + 1)])
        return {"dict": items}
    raise TreeCodecError(
        f"{path} is a {kind.__module__}.{kind.__qualname__}; saved functions take and return "
        "only arrays in tuples, lists, dicts and None (loading other classes would run code "
        "named by the file). Convert it to one of those before saving."
    )


def decode_treedef(encoded: JsonTree) -> Any:
    """The treedef that `encoded` describes.

    Raises:
        TreeCodecError: `encoded` is not a description `encode_treedef` writes (malformed,
            nested more than `MAX_DEPTH` deep, or a dict with repeated or mixed-type keys).
    """
    try:
        return tree_util.tree_structure(_decode(encoded, 0))
    except RecursionError:  # a tree_util limit below ours: still the file's fault
        raise TreeCodecError("tree structure in artifact nests too deeply") from None


def _decode(node: JsonTree, depth: int) -> Any:
    if type(node) is str and node == "*":
        return _LEAF
    if node is None:
        return None
    if depth >= MAX_DEPTH:
        raise TreeCodecError(f"tree structure in artifact nests more than {MAX_DEPTH} deep")
    if isinstance(node, dict) and len(node) == 1:
        ((kind, children),) = node.items()
        if isinstance(children, list):
            if kind == "tuple":
                return tuple(_decode(c, depth + 1) for c in children)
            if kind == "list":
                return [_decode(c, depth + 1) for c in children]
            if kind == "dict" and all(
                isinstance(i, list) and len(i) == 2 and type(i[0]) in (str, int) for i in children
            ):
                keys = [k for k, _ in children]
                if len(set(keys)) != len(keys) or len({type(k) for k in keys}) > 1:
                    raise TreeCodecError(
                        f"malformed dict in artifact: keys {_short(keys)} repeat or mix types"
                    )
                return {k: _decode(v, depth + 1) for k, v in children}
    raise TreeCodecError(f"malformed tree structure in artifact: {_short(node)}")


def _short(value: Any) -> str:
    """A short repr, at most a few levels deep (the value may nest without bound)."""
    return reprlib.repr(value)
