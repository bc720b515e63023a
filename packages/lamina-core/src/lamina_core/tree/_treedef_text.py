"""Treedefs as JAX prints them: `PyTreeDef({'a': *, 'b': (*, None)})`, custom nodes as
`CustomNode(Name[aux], [children])` (namedtuples as `namedtuple[Name]`).

`treedef_repr` writes that text for any treedef; `PublicTreeDef` is an optree treedef that
prints it, which the public API (`lamina.tree_util`, `lamina.tree`) hands to users. Lamina's own
code keeps optree's treedefs: making the public kind copies the treedef (about as long as the
flatten that made it), too slow for the tracing paths.
"""

from __future__ import annotations

import collections
from collections.abc import Iterable
from typing import Any, Final

import optree

from lamina_core.tree._registry import _CUSTOM_KEYS

_NODE_TEXT: Final = {type(None): "None", tuple: "({})", list: "[{}]"}


def _node_text(node_type: type[Any], data: Any, children: Iterable[str]) -> str:
    kids = list(children)
    joined = ", ".join(kids)
    if node_type in _CUSTOM_KEYS:
        return f"CustomNode({node_type.__name__}[{data}], [{joined}])"
    if node_type is tuple and len(kids) == 1:
        return f"({joined},)"
    if node_type in _NODE_TEXT:
        return _NODE_TEXT[node_type].format(joined)
    if node_type is dict:
        return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(data, kids, strict=True)) + "}"
    # JAX's registry holds these as custom nodes; their data as JAX's shows it.
    if optree.is_namedtuple_class(node_type):
        return f"CustomNode(namedtuple[{node_type.__name__}], [{joined}])"
    if node_type is collections.OrderedDict:
        data = tuple(data)
    elif node_type is collections.defaultdict:
        data = (data[0], tuple(data[1]))
    return f"CustomNode({node_type.__name__}[{data}], [{joined}])"


def treedef_repr(treedef: optree.PyTreeSpec) -> str:
    """The structure as JAX prints it (optree's own text says `PyTreeSpec(...)`)."""
    text = treedef.walk(["*"] * treedef.num_leaves, _node_text, None)
    return f"PyTreeDef({text})"


class PublicTreeDef(optree.PyTreeSpec):  # type: ignore[misc]  # optree marks it final
    """A treedef of the public API: optree's, printing as JAX's (`treedef_repr`); it equals
    and hashes as the optree treedef it copies, and works wherever one does."""

    __slots__ = ()

    def __repr__(self) -> str:
        return treedef_repr(self)

    __str__ = __repr__

    def children(self) -> list[optree.PyTreeSpec]:  # each a PublicTreeDef
        return [public_treedef(c) for c in super().children()]

    def compose(self, inner_treedef: optree.PyTreeSpec) -> PublicTreeDef:
        return public_treedef(super().compose(inner_treedef))


_new = PublicTreeDef.__new__


def public_treedef(treedef: optree.PyTreeSpec) -> PublicTreeDef:
    """`treedef` as the public API returns it (a copy through optree's pickling state)."""
    if type(treedef) is PublicTreeDef:
        return treedef
    public = _new(PublicTreeDef)
    public.__setstate__(treedef.__getstate__())  # type: ignore[attr-defined]  # not in the stub
    return public
