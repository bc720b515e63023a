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
"""

from __future__ import annotations

from typing import Any, Final

from lamina_core import tree_util


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
    return _encode(sample, what)


def _encode(node: Any, path: str) -> JsonTree:
    kind = type(node)
    if node is _LEAF:
        return "*"
    if node is None:
        return None
    if kind is tuple or kind is list:
        children = [_encode(c, f"{path}[{i}]") for i, c in enumerate(node)]
        return {kind.__name__: children}
    if kind is dict:
        items = []
        for k, v in node.items():
            if type(k) not in (str, int):
                raise TreeCodecError(
                    f"{path} is a dict with a {type(k).__name__} key ({k!r}); saved functions "
                    "take and return dicts with str or int keys only"
                )
            items.append([k, _encode(v, f"{path}[{k!r}]")])
        return {"dict": items}
    raise TreeCodecError(
        f"{path} is a {kind.__module__}.{kind.__qualname__}; saved functions take and return "
        "only arrays in tuples, lists, dicts and None (loading other classes would run code "
        "named by the file). Convert it to one of those before saving."
    )


def decode_treedef(encoded: JsonTree) -> Any:
    """The treedef that `encoded` describes.

    Raises:
        TreeCodecError: `encoded` is not a description `encode_treedef` writes.
    """
    return tree_util.tree_structure(_decode(encoded))


def _decode(node: JsonTree) -> Any:
    if node == "*":
        return _LEAF
    if node is None:
        return None
    if isinstance(node, dict) and len(node) == 1:
        ((kind, children),) = node.items()
        if isinstance(children, list):
            if kind == "tuple":
                return tuple(_decode(c) for c in children)
            if kind == "list":
                return [_decode(c) for c in children]
            if kind == "dict" and all(
                isinstance(i, list) and len(i) == 2 and type(i[0]) in (str, int) for i in children
            ):
                return {k: _decode(v) for k, v in children}
    raise TreeCodecError(f"malformed tree structure in artifact: {node!r}")
