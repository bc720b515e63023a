"""The argument and result structures of exported functions, as JSON: no pickle, no code.

Tuples, lists, dicts with string keys and None are built in; other node types are written
only when registered for serialization under a name (`register_pytree_node_serialization`,
`register_namedtuple_serialization`), with their auxiliary data as bytes that the registered
function makes and reads: loading then builds only classes the loading program registered.
`collections.OrderedDict` with string keys is registered, as JAX registers it.

    leaf   -> "*"
    None   -> null
    tuple  -> {"tuple": [child, ...]}
    list   -> {"list": [child, ...]}
    dict   -> {"dict": [[key, child], ...]}
    custom -> {"custom": [name, auxdata (base64), [child, ...]]}
"""

from __future__ import annotations

import base64
import binascii
import collections
import json
import reprlib
from collections.abc import Callable, Sequence
from typing import Any, Final, TypeVar

from lamina_core import tree_util
from lamina_runtime.export._format import SerializedExportError

T = TypeVar("T")

MAX_DEPTH: Final = 100
"""How deeply containers may nest in a serialized structure (deeper files are refused)."""

SerializeAuxData = Callable[[Any], bytes]
"""`serialize(aux_data) -> bytes` for a registered node type."""
DeserializeAuxData = Callable[[bytes], Any]
"""`deserialize(bytes) -> aux_data`, the inverse."""
FromChildren = Callable[[Any, Sequence[Any]], Any]
"""`from_children(aux_data, children)`: a node of the registered type."""

_by_type: Final[dict[type, tuple[str, SerializeAuxData]]] = {}
_by_name: Final[dict[str, tuple[type, DeserializeAuxData, FromChildren]]] = {}
_unflatten: Final[dict[type, FromChildren]] = {}
"""The unflatten function of every node type registered with `tree_util` (mirrored)."""

tree_util.on_node_registered(
    lambda nodetype, _flatten, unflatten: _unflatten.update({nodetype: unflatten})
)


def register_pytree_node_serialization(
    nodetype: type[T],
    *,
    serialized_name: str,
    serialize_auxdata: SerializeAuxData,
    deserialize_auxdata: DeserializeAuxData,
    from_children: FromChildren | None = None,
) -> type[T]:
    """Let exported functions take or return `nodetype` nodes (as `jax.export`'s).

    Args:
        nodetype: the node type, registered with `tree_util.register_pytree_node` first
            unless `from_children` is given.
        serialized_name: its name in serialized exports; at most one type per name.
        serialize_auxdata: the node's auxiliary data (from its flatten function) as bytes.
        deserialize_auxdata: the inverse of `serialize_auxdata`.
        from_children: builds a node from its auxiliary data and children; default: the
            type's registered unflatten function.

    Returns:
        `nodetype`, so that this can decorate a class.

    Raises:
        ValueError: the type or the name is already registered, or `from_children` is
            missing for a type that is not a registered pytree node.
    """
    if nodetype in _by_type:
        raise ValueError(
            f"Duplicate serialization registration for type `{nodetype}`. Previous "
            f"registration was with serialized_name `{_by_type[nodetype][0]}`."
        )
    if serialized_name in _by_name:
        raise ValueError(
            "Duplicate serialization registration for serialized_name "
            f"`{serialized_name}`. Previous registration was for type "
            f"`{_by_name[serialized_name][0]}`."
        )
    if from_children is None:
        found = _unflatten.get(nodetype)
        if found is None:
            raise ValueError(
                "If `from_children` is not present, you must call first"
                f"`jax.tree_util.register_pytree_node` for `{nodetype}`"
            )
        from_children = found
    _by_type[nodetype] = (serialized_name, serialize_auxdata)
    _by_name[serialized_name] = (nodetype, deserialize_auxdata, from_children)
    return nodetype


def _is_namedtuple(nodetype: type) -> bool:
    fields = getattr(nodetype, "_fields", None)
    return (
        issubclass(nodetype, tuple)
        and isinstance(fields, Sequence)
        and all(isinstance(f, str) for f in fields)
    )


def register_namedtuple_serialization(nodetype: type[T], *, serialized_name: str) -> type[T]:
    """Let exported functions take or return namedtuples of type `nodetype`; its field names
    are saved, and must match when loading.

    Raises:
        ValueError: `nodetype` is not a namedtuple class, or is already registered.
    """
    if not _is_namedtuple(nodetype):
        raise ValueError(
            "Use `jax.export.register_pytree_node_serialization` for types other than "
            "`collections.namedtuple`."
        )
    fields: Sequence[str] = nodetype._fields  # type: ignore[attr-defined]  # checked above

    def from_children(keys: Any, children: Sequence[Any]) -> Any:
        return nodetype(**dict(zip(keys, children, strict=True)))

    return register_pytree_node_serialization(
        nodetype,
        serialized_name=serialized_name,
        serialize_auxdata=lambda _aux: json.dumps(list(fields)).encode(),
        deserialize_auxdata=lambda data: json.loads(data.decode()),
        from_children=from_children,
    )


def _ordered_dict_keys(keys: Any) -> bytes:
    if isinstance(keys, Sequence) and all(isinstance(k, str) for k in keys):
        return json.dumps(list(keys)).encode()
    raise NotImplementedError(
        "Serialization of collections.OrderedDict is supported only when the keys are "
        f"strings. Found keys: {keys}."
    )


register_pytree_node_serialization(
    collections.OrderedDict,
    serialized_name="collections.OrderedDict",
    serialize_auxdata=_ordered_dict_keys,
    deserialize_auxdata=lambda data: json.loads(data.decode()),
    from_children=lambda keys, children: collections.OrderedDict(zip(keys, children, strict=True)),
)


class TreeFormatError(SerializedExportError):
    """A malformed structure in a serialized export."""


class _Leaf:
    """The placeholder leaf while decoding. Identity is intended."""


_LEAF: Final = _Leaf()


def encode_treedef(treedef: Any) -> Any:
    """The JSON description of `treedef`.

    Raises:
        TypeError: a dict has a key that is not a string (JAX's error).
        ValueError: a node type is not registered for serialization (JAX's error).
    """
    if treedef.num_nodes > 100_000:
        raise ValueError(f"a structure of {treedef.num_nodes} nodes is too large to serialize")
    return treedef.walk([None] * treedef.num_leaves, f_node=_encode_node, f_leaf=lambda _: "*")


def _encode_node(kind: type, data: Any, children: tuple[Any, ...]) -> Any:
    if kind is type(None):
        return None
    if kind is tuple or kind is list:
        return {kind.__name__: list(children)}
    if kind is dict:
        for key in data:
            if not isinstance(key, str):
                raise TypeError(
                    "Serialization is supported only for dictionaries with string keys. "
                    f"Found key {key} of type {type(key)}."
                )
        return {"dict": [[k, c] for k, c in zip(data, children, strict=True)]}
    if kind in _by_type:
        name, serialize_aux = _by_type[kind]
        blob = serialize_aux(data)
        if not isinstance(blob, (bytes, bytearray)):
            raise ValueError(
                "The custom serialization function for `node_type` must return a `bytes` "
                f"object. It returned a {type(blob)}."
            )
        return {"custom": [name, base64.b64encode(bytes(blob)).decode(), list(children)]}
    raise ValueError(
        f"Cannot serialize PyTreeDef containing an unregistered type `{kind}`. Use "
        "`export.register_pytree_node_serialization` or "
        "`export.register_namedtuple_serialization`."
    )


def decode_treedef(encoded: Any) -> Any:
    """The treedef that `encoded` describes.

    Raises:
        TreeFormatError: `encoded` is malformed.
        ValueError: it names a node type this process has not registered (JAX's error).
    """
    try:
        return tree_util.tree_structure(_decode(encoded, 0))
    except RecursionError:
        raise TreeFormatError("a serialized structure nests too deeply") from None


def _decode(node: Any, depth: int) -> Any:
    if type(node) is str and node == "*":
        return _LEAF
    if node is None:
        return None
    if depth >= MAX_DEPTH:
        raise TreeFormatError(f"a serialized structure nests more than {MAX_DEPTH} deep")
    if isinstance(node, dict) and len(node) == 1:
        ((kind, body),) = node.items()
        if kind in ("tuple", "list") and isinstance(body, list):
            children = [_decode(c, depth + 1) for c in body]
            return tuple(children) if kind == "tuple" else children
        if kind == "dict" and _is_items(body):
            return {k: _decode(v, depth + 1) for k, v in body}
        if kind == "custom" and isinstance(body, list) and len(body) == 3:
            return _decode_custom(body, depth)
    raise TreeFormatError(f"malformed structure in serialized export: {reprlib.repr(node)}")


def _is_items(body: Any) -> bool:
    """Whether `body` is a dict's `[[key, child], ...]`, with distinct string keys."""
    if not isinstance(body, list):
        return False
    if not all(isinstance(i, list) and len(i) == 2 and isinstance(i[0], str) for i in body):
        return False
    return len({k for k, _ in body}) == len(body)


def _decode_custom(body: list[Any], depth: int) -> Any:
    name, aux, children = body
    if not (isinstance(name, str) and isinstance(aux, str) and isinstance(children, list)):
        raise TreeFormatError(f"malformed custom node in serialized export: {reprlib.repr(body)}")
    if name not in _by_name:
        raise ValueError(
            f"Cannot deserialize a PyTreeDef containing an unregistered type `{name}`. Use "
            "`export.register_pytree_node_serialization` or "
            "`export.register_namedtuple_serialization`."
        )
    _, deserialize_aux, from_children = _by_name[name]
    try:
        data = base64.b64decode(aux, validate=True)
    except binascii.Error:
        raise TreeFormatError(
            f"malformed auxiliary data of {name!r} in serialized export"
        ) from None
    return from_children(deserialize_aux(data), [_decode(c, depth + 1) for c in children])
