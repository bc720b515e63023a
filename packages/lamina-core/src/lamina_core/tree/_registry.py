"""Lamina's pytree registry: which types are nodes, and how their children are keyed.

Every registration goes into Lamina's own optree namespace (`NAMESPACE`), so other optree users
never see Lamina's node types, and none of theirs leak in. The key classes are JAX's; optree's
typed path entries are translated into them by `key_paths`.

`tree_util` is the public face of this module; nothing else should import it.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import warnings
from collections.abc import Callable, Collection, Hashable, Iterable, Sequence
from typing import Any, Final, Self, TypeAlias, TypeVar, cast

import optree
from optree import _C
from optree.typing import FlattenFunc, UnflattenFunc

from lamina_core.tree._exit_guard import guard_optree_exit

guard_optree_exit()  # optree's exit functions must not break pytrees before the real exit

T = TypeVar("T")
Typ = TypeVar("Typ", bound=type[Any])
H = TypeVar("H", bound=Hashable)

PyTreeDef: TypeAlias = optree.PyTreeSpec
KeyEntry: TypeAlias = Hashable
KeyPath: TypeAlias = tuple[KeyEntry, ...]

NAMESPACE: Final = "lamina"
"""Lamina's optree namespace; `none_is_leaf` is always False alongside it."""


# ---------------------------------------------------------------------------------------------
# Key paths


@dataclasses.dataclass(frozen=True, slots=True)
class SequenceKey:
    """The position of a child in a tuple or list; prints as `[0]`."""

    idx: int
    """The child's index."""

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class DictKey:
    """The key of a child in a dict-like node; prints as `['a']`."""

    key: Hashable
    """The dict key."""

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class GetAttrKey:
    """The attribute holding a child (namedtuple fields, dataclasses); prints as `.x`."""

    name: str
    """The attribute name."""

    def __str__(self) -> str:
        return f".{self.name}"


@dataclasses.dataclass(frozen=True, slots=True)
class FlattenedIndexKey:
    """The position of a child of a custom node registered without keys."""

    key: int
    """The child's index among the node's children."""

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


def _same_key(key: KeyEntry) -> KeyEntry:
    return key


def _field_key(fields: Sequence[str], index: int) -> GetAttrKey:
    return GetAttrKey(fields[index])


_CUSTOM_KEYS: Final[dict[type[Any], Callable[[Any], KeyEntry]]] = {}
"""How each registered type's optree path entries become keys. Written only by `_register`."""

# Per node kind: given the node's treedef, a function from its children's optree path entries
# (indices, dict keys, or whatever a custom flatten returned) to Lamina keys.
_KEY_MAKERS: Final[dict[optree.PyTreeKind, Callable[[PyTreeDef], Callable[[Any], KeyEntry]]]] = {
    optree.PyTreeKind.TUPLE: lambda _: SequenceKey,
    optree.PyTreeKind.LIST: lambda _: SequenceKey,
    optree.PyTreeKind.DEQUE: lambda _: SequenceKey,
    optree.PyTreeKind.DICT: lambda _: DictKey,
    optree.PyTreeKind.ORDEREDDICT: lambda _: DictKey,
    optree.PyTreeKind.DEFAULTDICT: lambda _: DictKey,
    optree.PyTreeKind.NAMEDTUPLE: lambda td: functools.partial(
        _field_key, _C.namedtuple_fields(cast("type[tuple[Any, ...]]", td.type))
    ),
    optree.PyTreeKind.STRUCTSEQUENCE: lambda td: functools.partial(
        _field_key, _C.structseq_fields(cast("type[tuple[Any, ...]]", td.type))
    ),
    optree.PyTreeKind.CUSTOM: lambda td: _CUSTOM_KEYS[cast("type[Any]", td.type)],
}


def key_paths(treedef: PyTreeDef) -> list[KeyPath]:
    """The key path of each leaf of `treedef`, in leaf order."""
    # optree's own treedef.accessors() does this too, but builds a Python entry object per path
    # element, which made it 2-3x slower than this walk (measured on a 10-leaf dict).
    paths: list[KeyPath] = []

    def walk(prefix: KeyPath, node: PyTreeDef) -> None:
        if node.num_nodes == 1:  # a leaf, or a node without children
            if node.num_leaves:
                paths.append(prefix)
            return
        make_key = _KEY_MAKERS[node.kind](node)
        for entry, child in zip(node.entries(), node.children(), strict=True):
            walk((*prefix, make_key(entry)), child)

    walk((), treedef)
    return paths


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """Formats a key path for humans.

    Args:
        keys: the key path, e.g. from `tree_flatten_with_path`.
        simple: print only each key's payload (`a/0` instead of `['a'][0]`); shorter, but
            ambiguous between, say, a list index 0 and a dict key `"0"`.
        separator: joins the printed keys.

    Returns:
        The joined string, e.g. `"['a'][0].x"`.
    """
    return separator.join(map(_simple_key_str if simple else str, keys))


def _simple_key_str(key: KeyEntry) -> str:
    match key:
        case SequenceKey(k) | DictKey(k) | GetAttrKey(k) | FlattenedIndexKey(k):
            return str(k)
        case _:
            return str(key)


# ---------------------------------------------------------------------------------------------
# Registration

NodeListener: TypeAlias = Callable[
    [type[Any], Callable[[Any], tuple[Any, Any]], Callable[[Any, Any], Any]], None
]
_registered: Final[list[tuple[type[Any], Callable[[Any], tuple[Any, Any]], Any]]] = []
_listeners: Final[list[NodeListener]] = []


def on_node_registered(listener: NodeListener) -> None:
    """Call `listener(nodetype, flatten, unflatten)` for every node type registered so far and
    from now on, with JAX's function shapes: `flatten(x) -> (children, aux)` and
    `unflatten(aux, children)`. Lets another tree registry mirror Lamina's (the runtime's C++
    jit dispatch flattens arguments with jaxlib's)."""
    _listeners.append(listener)
    for nodetype, flatten, unflatten in _registered:
        listener(nodetype, flatten, unflatten)


def _register(
    nodetype: type[Any],
    flatten: Callable[[Any], tuple[Any, ...]],
    unflatten: Callable[[Any, Any], Any],
    key_of_entry: Callable[[Any], KeyEntry],
) -> None:
    try:
        with warnings.catch_warnings():
            # optree warns that a namedtuple class overrides its built-in handling; JAX takes
            # namedtuple classes silently (jax.example_libraries registers one).
            warnings.filterwarnings("ignore", "PyTree type .*namedtuple", UserWarning)
            # casts: optree types nodes as Collections; JAX, and so Lamina, takes any class.
            optree.register_pytree_node(
                cast("type[Collection[Any]]", nodetype),
                cast("FlattenFunc[Any]", flatten),
                cast("UnflattenFunc[Any]", unflatten),
                namespace=NAMESPACE,
            )
    except ValueError as err:
        raise ValueError(
            f"cannot register {nodetype!r} as a pytree node: {err} A type is registered at most "
            "once per process, and built-in containers cannot be registered."
        ) from None
    _CUSTOM_KEYS[nodetype] = key_of_entry

    def children_and_aux(node: Any) -> tuple[Any, Any]:
        children, aux, *_ = flatten(node)  # optree's flatten may add the keys as a third item
        return children, aux

    _registered.append((nodetype, children_and_aux, unflatten))
    for listener in _listeners:
        listener(nodetype, children_and_aux, unflatten)


def register_pytree_node(
    nodetype: type[T],
    flatten_func: Callable[[T], tuple[Iterable[Any], Hashable]],
    unflatten_func: Callable[[Any, Iterable[Any]], T],
    flatten_with_keys_func: Callable[[T], tuple[Iterable[tuple[KeyEntry, Any]], Hashable]]
    | None = None,
) -> None:
    """Makes `nodetype` a pytree node.

    Args:
        nodetype: the class.
        flatten_func: returns `(children, aux_data)`; `aux_data` must be hashable and comparable,
            since it is part of the treedef.
        unflatten_func: called as `unflatten_func(aux_data, children)`; it must accept any
            objects as children, not only the original ones.
        flatten_with_keys_func: returns `((key, child), ...), aux_data` to give children key
            paths; without it they get `FlattenedIndexKey`s.

    Raises:
        ValueError: if `nodetype` is already registered or is a built-in container.
    """
    if flatten_with_keys_func is not None:
        register_pytree_with_keys(nodetype, flatten_with_keys_func, unflatten_func, flatten_func)
        return
    _register(nodetype, flatten_func, unflatten_func, FlattenedIndexKey)


def register_pytree_with_keys(
    nodetype: type[T],
    flatten_with_keys: Callable[[T], tuple[Iterable[tuple[KeyEntry, Any]], Hashable]],
    unflatten_func: Callable[[Any, Iterable[Any]], T],
    flatten_func: Callable[[T], tuple[Iterable[Any], Hashable]] | None = None,
) -> None:
    """Makes `nodetype` a pytree node whose children have key paths.

    Args:
        nodetype: the class.
        flatten_with_keys: returns `((key, child), ...), aux_data`.
        unflatten_func: as in `register_pytree_node`.
        flatten_func: accepted for JAX compatibility and unused: optree keeps one flatten
            function per type, and it must produce the keys.

    Raises:
        ValueError: if `nodetype` is already registered or is a built-in container.
    """
    del flatten_func

    def flatten(node: T) -> tuple[list[Any], Hashable, list[KeyEntry]]:
        pairs, aux = flatten_with_keys(node)
        pairs = tuple(pairs)
        return [child for _, child in pairs], aux, [key for key, _ in pairs]

    _register(nodetype, flatten, unflatten_func, _same_key)


def register_pytree_node_class(cls: Typ) -> Typ:
    """Class decorator: registers a class with `tree_flatten` and classmethod `tree_unflatten`."""
    register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls: Typ) -> Typ:
    """Class decorator: registers a class with `tree_flatten_with_keys` and `tree_unflatten`."""
    register_pytree_with_keys(
        cls, operator.methodcaller("tree_flatten_with_keys"), cls.tree_unflatten
    )
    return cls


def register_static(cls: type[H]) -> type[H]:
    """Registers a hashable class as a pytree with no leaves: its instances are static data."""
    _register(cls, lambda x: ((), x, ()), lambda x, _: x, _same_key)
    return cls


def register_dataclass(
    nodetype: Typ,
    data_fields: Sequence[str] | None = None,
    meta_fields: Sequence[str] | None = None,
    drop_fields: Sequence[str] = (),
) -> Typ:
    """Makes a dataclass-like class a pytree node: data fields are children, meta fields static.

    Args:
        nodetype: the class; instances are rebuilt as `nodetype(**fields)`.
        data_fields: attributes that are children. Give both this and `meta_fields`, or neither
            for a dataclass: then fields with `metadata={"static": True}` are meta fields and the
            rest data fields.
        meta_fields: attributes that go into the treedef; hashable and comparable.
        drop_fields: for a dataclass, `init=True` fields to leave out.

    Returns:
        `nodetype`, so that this works as a decorator.

    Raises:
        TypeError: if only one of `data_fields`/`meta_fields` is given, or neither for a class
            that is not a dataclass.
        ValueError: if the fields overlap or, for a dataclass, do not name exactly its
            `init=True` fields outside `drop_fields`; or if `nodetype` is already registered.
    """
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError(
                f"register_dataclass({nodetype.__qualname__}): give both data_fields and "
                f"meta_fields or neither; got data_fields={data_fields!r}, "
                f"meta_fields={meta_fields!r}"
            )
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(
                f"register_dataclass({nodetype.__qualname__}): data_fields and meta_fields are "
                "required for a class that is not a dataclass"
            )
        fields = dataclasses.fields(nodetype)
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data, meta = tuple(data_fields), tuple(meta_fields)  # copies: callers may mutate theirs
    if dataclasses.is_dataclass(nodetype):
        expected = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop_fields)
        missing, unexpected = expected - {*data, *meta}, {*data, *meta} - expected
        if missing or unexpected:
            raise ValueError(
                f"register_dataclass({nodetype.__qualname__}): data_fields and meta_fields must "
                f"name every init=True field not in drop_fields, and only those; missing "
                f"{sorted(missing)} (add them to drop_fields to leave them out), unexpected "
                f"{sorted(unexpected)}"
            )
    if overlap := set(data) & set(meta):
        raise ValueError(
            f"register_dataclass({nodetype.__qualname__}): fields {sorted(overlap)} are in both "
            "data_fields and meta_fields"
        )
    data_of, meta_of = _attrs_getter(data), _attrs_getter(meta)
    keys = tuple(GetAttrKey(name) for name in data)

    def flatten(x: Any) -> tuple[tuple[Any, ...], tuple[Any, ...], tuple[GetAttrKey, ...]]:
        return data_of(x), meta_of(x), keys

    def unflatten(meta_values: tuple[Any, ...], data_values: Iterable[Any]) -> Any:
        return nodetype(
            **dict(zip(meta, meta_values, strict=True)), **dict(zip(data, data_values, strict=True))
        )

    _register(nodetype, flatten, unflatten, _same_key)
    return nodetype


def _attrs_getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    # attrgetter runs in C, but returns a bare value for one name and needs at least one.
    if not names:
        return lambda _: ()
    if len(names) == 1:
        get = operator.attrgetter(names[0])
        return lambda x: (get(x),)
    return cast("Callable[[Any], tuple[Any, ...]]", operator.attrgetter(*names))


# ---------------------------------------------------------------------------------------------
# Partial


@dataclasses.dataclass(frozen=True, slots=True)
class _OpaqueCallable:
    """Hides a `functools.partial` from `partial.__new__`, which would merge it into its caller."""

    fun: Callable[..., Any]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fun(*args, **kwargs)


class Partial(functools.partial[T]):
    """A `functools.partial` that is a pytree: bound arguments are children, the function static.

    Example:
        >>> from lamina_core.tree.tree_util import tree_leaves
        >>> add_one = Partial(operator.add, 1)
        >>> add_one(2), tree_leaves(add_one)
        (3, [1])
    """

    def __new__(cls, func: Callable[..., T], /, *args: Any, **kwargs: Any) -> Self:
        if isinstance(func, functools.partial):
            # Merging would move the inner partial's arguments from the treedef to the leaves.
            func = _OpaqueCallable(func)
        return super().__new__(cls, func, *args, **kwargs)


def _flatten_partial(p: Partial[Any]) -> tuple[tuple[Any, ...], Callable[..., Any]]:
    return (p.args, p.keywords), p.func


def _unflatten_partial(func: Callable[..., Any], children: Iterable[Any]) -> Partial[Any]:
    args, keywords = children
    return Partial(func, *args, **keywords)


register_pytree_node(Partial, _flatten_partial, _unflatten_partial)
