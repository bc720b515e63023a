"""Tests of Lamina's pytrees (`lamina_core.tree.tree_util`, `lamina_core.tree.tree`).

Unit and property tests run everywhere. Oracle tests compare with `jax.tree_util` on a corpus of
trees; they get JAX from the `jtu` fixture, so this module imports without JAX. Treedef reprs
differ by design (optree's format), so the oracle compares leaves, structure and key paths.
"""

from __future__ import annotations

import collections
import dataclasses
import doctest
import functools
import operator
import pickle
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any, NamedTuple

import optree
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lamina_core import tree_util as tu
from lamina_core.tree import _registry as _tree_registry
from lamina_core.tree import public as tree_public
from lamina_core.tree import tree
from lamina_core.tree.tree_util import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    KeyEntry,
    Partial,
    SequenceKey,
    keystr,
    treedef_repr,
)

# ---------------------------------------------------------------------------------------------
# Node types of the corpus. Each is registered with Lamina here and with JAX by `jtu`.


class Point:
    """Registered without keys: its children get `FlattenedIndexKey`s."""

    def __init__(self, x: Any, y: Any) -> None:
        self.x, self.y = x, y

    def __eq__(self, other: object) -> bool:
        return type(other) is Point and (self.x, self.y) == (other.x, other.y)

    def __repr__(self) -> str:
        return f"Point({self.x!r}, {self.y!r})"


def _point_flatten(p: Point) -> tuple[tuple[Any, Any], None]:
    return (p.x, p.y), None


def _point_unflatten(_: None, children: Iterable[Any]) -> Point:
    return Point(*children)


tu.register_pytree_node(Point, _point_flatten, _point_unflatten)


class Box:
    """Registered with keys and aux data (its label)."""

    def __init__(self, label: str, content: Any, extra: Any) -> None:
        self.label, self.content, self.extra = label, content, extra

    def __eq__(self, other: object) -> bool:
        return type(other) is Box and vars(self) == vars(other)

    def __repr__(self) -> str:
        return f"Box({self.label!r}, {self.content!r}, {self.extra!r})"


def _box_flatten_with_keys(
    key: Callable[[str], KeyEntry],
) -> Callable[[Box], tuple[tuple[tuple[Any, Any], ...], str]]:
    return lambda b: (((key("content"), b.content), (key("extra"), b.extra)), b.label)


def _box_unflatten(label: str, children: Iterable[Any]) -> Box:
    return Box(label, *children)


tu.register_pytree_with_keys(Box, _box_flatten_with_keys(GetAttrKey), _box_unflatten)


@tu.register_pytree_node_class
class Pair:
    """Registered through its `tree_flatten`/`tree_unflatten` methods."""

    def __init__(self, first: Any, second: Any, tag: tuple[str, ...] = ()) -> None:
        self.first, self.second, self.tag = first, second, tag

    def tree_flatten(self) -> tuple[tuple[Any, Any], tuple[str, ...]]:
        return (self.first, self.second), self.tag

    @classmethod
    def tree_unflatten(cls, tag: tuple[str, ...], children: Iterable[Any]) -> Pair:
        first, second = children
        return cls(first, second, tag)

    def __eq__(self, other: object) -> bool:
        return type(other) is Pair and vars(self) == vars(other)

    def __repr__(self) -> str:
        return f"Pair({self.first!r}, {self.second!r}, {self.tag!r})"


@tu.register_pytree_with_keys_class
class Keyed:
    """Registered through `tree_flatten_with_keys`, with dict-style keys."""

    def __init__(self, items: dict[str, Any]) -> None:
        self.items = items

    def tree_flatten_with_keys(self) -> tuple[list[tuple[DictKey, Any]], tuple[str, ...]]:
        names = tuple(self.items)
        return [(DictKey(n), self.items[n]) for n in names], names

    @classmethod
    def tree_unflatten(cls, names: tuple[str, ...], children: Iterable[Any]) -> Keyed:
        return cls(dict(zip(names, children, strict=True)))

    def __eq__(self, other: object) -> bool:
        return type(other) is Keyed and self.items == other.items

    def __repr__(self) -> str:
        return f"Keyed({self.items!r})"


@tu.register_dataclass
@dataclasses.dataclass
class Params:
    """A dataclass whose static field is marked in its metadata."""

    w: Any
    b: Any
    activation: str = tree.static(default="relu")


class Explicit:
    """Not a dataclass: registered with explicit data and meta fields."""

    def __init__(self, *, scale: Any, name: str) -> None:
        self.scale, self.name = scale, name

    def __eq__(self, other: object) -> bool:
        return type(other) is Explicit and vars(self) == vars(other)

    def __repr__(self) -> str:
        return f"Explicit(scale={self.scale!r}, name={self.name!r})"


tu.register_dataclass(Explicit, data_fields=["scale"], meta_fields=["name"])


@tu.register_static
@dataclasses.dataclass(frozen=True)
class Frozen:
    """Static: no leaves, and its value is part of the treedef."""

    setting: str


class NT(NamedTuple):
    x: Any
    y: Any


OD, DD = collections.OrderedDict, collections.defaultdict

CORPUS: list[Any] = [
    1,
    None,
    (),
    [],
    {},
    (1, 2),
    [1, [2, (3, None)], ()],
    {"b": 1, "a": {"d": 2, "c": [3]}, "e": None},
    {"z": None, "a": (None, 1)},
    {1: "x", 0: "y"},
    NT(1, (2, 3)),
    [NT(None, {"k": 4})],
    OD([("b", 1), ("a", 2)]),
    {"od": OD([("z", [1]), ("y", 2)])},
    DD(list, {"b": 1, "a": 2}),
    Point(1, (2, 3)),
    Box("lbl", [1, 2], {"q": 3}),
    Pair(1, Point(2, None), ("t",)),
    Keyed({"y": 1, "x": (2, 3)}),
    Params(w=[1, 2], b=3),
    Params(w=1, b=(2,), activation="tanh"),
    Explicit(scale=[1.5], name="e"),
    [Frozen("on"), 1, (Frozen("off"),)],
    {"mix": [Point(NT(1, 2), None), Box("b", OD(a=1), Params(1, 2))]},
]


CORPUS_IDS = [f"{i}-{type(t).__name__}" for i, t in enumerate(CORPUS)]


def _same(a: Any, b: Any) -> bool:
    """Equal, with equal types all the way down and equal key order in OrderedDicts."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        if isinstance(a, OD) and list(a) != list(b):
            return False
        if isinstance(a, DD) and a.default_factory is not b.default_factory:
            return False
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


def _identical(xs: list[Any], ys: list[Any]) -> bool:
    return len(xs) == len(ys) and all(x is y for x, y in zip(xs, ys, strict=True))


# ---------------------------------------------------------------------------------------------
# Oracle: JAX with the corpus types registered


@pytest.fixture(scope="module")
def jtu() -> ModuleType:
    """`jax.tree_util`, with this module's node types registered as they are in Lamina."""
    jtu: ModuleType = pytest.importorskip("jax.tree_util")
    jtu.register_pytree_node(Point, _point_flatten, _point_unflatten)
    jtu.register_pytree_with_keys(Box, _box_flatten_with_keys(jtu.GetAttrKey), _box_unflatten)
    jtu.register_pytree_node(Pair, operator.methodcaller("tree_flatten"), Pair.tree_unflatten)
    jtu.register_pytree_with_keys(
        Keyed,
        lambda k: ([(jtu.DictKey(n), k.items[n]) for n in k.items], tuple(k.items)),
        Keyed.tree_unflatten,
    )
    jtu.register_dataclass(Params)
    jtu.register_dataclass(Explicit, data_fields=["scale"], meta_fields=["name"])
    jtu.register_static(Frozen)
    return jtu


def _paths(path_leaves: list[tuple[tuple[Any, ...], Any]]) -> list[list[str]]:
    # Lamina's and JAX's key classes share names and reprs, so reprs compare the keys' kinds too.
    return [[repr(k) for k in path] for path, _ in path_leaves]


@pytest.mark.oracle
@pytest.mark.parametrize("t", CORPUS, ids=CORPUS_IDS)
def test_flatten_matches_jax(jtu: ModuleType, t: Any) -> None:
    leaves, treedef = tu.tree_flatten(t)
    j_leaves, j_treedef = jtu.tree_flatten(t)
    assert _identical(leaves, j_leaves)
    assert (treedef.num_leaves, treedef.num_nodes) == (j_treedef.num_leaves, j_treedef.num_nodes)
    assert tu.treedef_is_leaf(treedef) == jtu.treedef_is_leaf(j_treedef)
    children = tu.treedef_children(treedef)
    j_children = jtu.treedef_children(j_treedef)
    assert [c.num_leaves for c in children] == [c.num_leaves for c in j_children]
    fresh = [f"leaf{i}" for i in range(treedef.num_leaves)]
    assert _same(tu.tree_unflatten(treedef, fresh), jtu.tree_unflatten(j_treedef, fresh))


@pytest.mark.oracle
@pytest.mark.parametrize("t", CORPUS, ids=CORPUS_IDS)
def test_key_paths_match_jax(jtu: ModuleType, t: Any) -> None:
    with_path = tu.tree_leaves_with_path(t)
    j_with_path = jtu.tree_leaves_with_path(t)
    assert _paths(with_path) == _paths(j_with_path)
    assert _identical([x for _, x in with_path], [x for _, x in j_with_path])
    for simple, sep in [(False, ""), (True, "/"), (False, " ")]:
        strs = [keystr(p, simple=simple, separator=sep) for p, _ in with_path]
        j_strs = [jtu.keystr(p, simple=simple, separator=sep) for p, _ in j_with_path]
        assert strs == j_strs


@pytest.mark.oracle
@pytest.mark.parametrize("t", CORPUS, ids=CORPUS_IDS)
def test_tree_map_matches_jax(jtu: ModuleType, t: Any) -> None:
    def tag(x: Any) -> Any:
        return ("seen", x)

    assert _same(tu.tree_map(tag, t), jtu.tree_map(tag, t))
    assert _same(tu.tree_map(lambda x, y: (x, y), t, t), jtu.tree_map(lambda x, y: (x, y), t, t))
    assert _same(
        tu.tree_map_with_path(lambda p, x: keystr(p), t),
        jtu.tree_map_with_path(lambda p, x: jtu.keystr(p), t),
    )
    tuples_are_leaves = lambda x: isinstance(x, tuple)  # noqa: E731
    assert _identical(
        tu.tree_leaves(t, is_leaf=tuples_are_leaves), jtu.tree_leaves(t, is_leaf=tuples_are_leaves)
    )
    nones_are_leaves = lambda x: x is None  # noqa: E731
    assert _identical(
        tu.tree_leaves(t, is_leaf=nones_are_leaves), jtu.tree_leaves(t, is_leaf=nones_are_leaves)
    )


@pytest.mark.oracle
def test_treedef_equality_matches_jax_on_every_corpus_pair(jtu: ModuleType) -> None:
    # Same corpus twice with different dict insertion orders, to check order-(in)sensitivity.
    variants = [*CORPUS, {"a": 1, "b": 2}, {"b": 1, "a": 2}, OD(a=1, b=2), OD(b=1, a=2)]
    variants += [DD(dict, {"a": 1}), DD(list, {"a": 1}), Frozen("on"), Params(1, 2, "tanh")]
    defs = [tu.tree_structure(t) for t in variants]
    j_defs = [jtu.tree_structure(t) for t in variants]
    for i, (d, jd) in enumerate(zip(defs, j_defs, strict=True)):
        for e, je in zip(defs[i:], j_defs[i:], strict=True):
            assert (d == e) == (jd == je), (d, e)


@pytest.mark.oracle
@pytest.mark.parametrize(
    "t", [1, None, (), (1, (2, None)), [1, {"b": 2, "a": [3]}], {"x": None, "y": ()}]
)
def test_treedef_str_matches_jax_for_builtin_containers_up_to_the_class_name(
    jtu: ModuleType, t: Any
) -> None:
    assert str(tu.tree_structure(t)).replace("PyTreeSpec", "PyTreeDef") == str(
        jtu.tree_structure(t)
    )


@pytest.mark.oracle
@pytest.mark.parametrize("t", [*CORPUS, Point(1, (2, None)), Frozen("z")])
def test_public_treedefs_print_as_jaxs(jtu: ModuleType, t: Any) -> None:
    # Every node kind of the corpus: None, tuples (one element), lists, dicts, namedtuples,
    # OrderedDict, defaultdict, custom nodes with and without aux data, static nodes, Partial.
    public = tree_public.tree_structure(t)
    expected = str(jtu.tree_structure(t))
    assert repr(public) == str(public) == treedef_repr(tu.tree_structure(t)) == expected
    assert public == tu.tree_structure(t) and hash(public) == hash(tu.tree_structure(t))
    assert [str(c) for c in public.children()] == [str(c) for c in jtu.tree_structure(t).children()]
    leaves, flat_def = tree_public.tree_flatten(t)
    assert str(flat_def) == expected and tu.tree_unflatten(flat_def, leaves) == t
    assert str(pickle.loads(pickle.dumps(public))) == expected


@pytest.mark.oracle
def test_partial_treedefs_print_as_jaxs(jtu: ModuleType) -> None:
    ours = tree_public.tree_structure(tu.Partial(max, 1, [2], key=None))
    assert str(ours) == str(jtu.tree_structure(jtu.Partial(max, 1, [2], key=None)))


MISMATCHED: list[tuple[Any, Any]] = [
    ({"a": 1, "b": (2, 3)}, {"a": 1, "b": [2, 3]}),
    ({"a": 1, "b": (2, 3)}, {"a": 1, "b": (2,)}),
    ({"a": 1, "b": (2, 3)}, {"a": 1, "c": (2, 3)}),
    ([None], [3]),
    ([1, (2, 3)], [1, 5]),
    ({"a": 1}, OD(a=1)),
    (OD(a=1), {"a": 1}),
    (OD(a=1, b=2), OD(b=1, a=2)),
    (DD(list, {"a": 1}), DD(dict, {"a": 1})),
    ({"a": 1}, DD(list, {"a": 1})),
    ((1, 2), NT(1, 2)),
    (Box("x", 1, 2), Box("y", 1, 2)),
    (Pair(1, 2), Point(1, 2)),
    (Params(1, 2), Params(1, 2, "tanh")),
    ([Frozen("a")], [Frozen("b")]),
]
PREFIXES: list[tuple[Any, Any]] = [
    ([1, 2], [(1, 2), {"a": 3}]),
    ({"a": 1, "b": None}, {"b": None, "a": [1, 2]}),
    (Point(1, 2), Point((1,), NT(2, 3))),
    ([3], [None]),
]


@pytest.mark.oracle
@pytest.mark.parametrize(("t", "other"), MISMATCHED)
def test_tree_map_rejects_what_jax_rejects_in_jax_words(
    jtu: ModuleType, t: Any, other: Any
) -> None:
    with pytest.raises(ValueError) as jax_error:
        jtu.tree_map(lambda *xs: xs, t, other)
    with pytest.raises(ValueError) as our_error:
        tu.tree_map(lambda *xs: xs, t, other)
    assert str(our_error.value) == str(jax_error.value)
    assert "tree_map tree" in str(our_error.value)
    with pytest.raises(ValueError) as jax_error:
        jtu.tree_broadcast(t, other)
    with pytest.raises(ValueError) as our_error:
        tu.tree_broadcast(t, other)
    assert str(our_error.value) == str(jax_error.value)
    assert "broadcast_prefix prefix_tree" in str(our_error.value)


@pytest.mark.oracle
@pytest.mark.parametrize(("t", "other"), PREFIXES)
def test_tree_map_accepts_the_prefixes_jax_accepts(jtu: ModuleType, t: Any, other: Any) -> None:
    def pair(*xs: Any) -> Any:
        return xs

    assert _same(tu.tree_map(pair, t, other), jtu.tree_map(pair, t, other))
    assert _same(tu.tree_broadcast(t, other), jtu.tree_broadcast(t, other))


@pytest.mark.oracle
def test_restructuring_functions_match_jax(jtu: ModuleType) -> None:
    outer, inner = [0, 0, 0], {"a": 0, "b": (0, 0)}
    nested = [{"a": i, "b": (i + 1, i + 2)} for i in range(3)]
    for inner_def, j_inner_def in [
        (None, None),
        (tu.tree_structure(inner), jtu.tree_structure(inner)),
    ]:
        assert _same(
            tu.tree_transpose(tu.tree_structure(outer), inner_def, nested),
            jtu.tree_transpose(jtu.tree_structure(outer), j_inner_def, nested),
        )
    with pytest.raises(TypeError):
        jtu.tree_transpose(jtu.tree_structure(outer), jtu.tree_structure(inner), nested[:2])
    with pytest.raises(TypeError, match="tree_transpose"):
        tu.tree_transpose(tu.tree_structure(outer), tu.tree_structure(inner), nested[:2])

    def concat(a: str, b: str) -> str:
        return f"({a}{b})"

    letters = list("abcdefg")
    for n in range(1, 8):
        assert tu.tree_reduce_associative(concat, letters[:n]) == jtu.tree_reduce_associative(
            concat, letters[:n]
        )
    assert tu.tree_reduce(operator.sub, [10, (1, 2)]) == jtu.tree_reduce(operator.sub, [10, (1, 2)])
    pieces: list[Any] = [[1, None], "x", (), {"a": 1}, Point(1, 2), Frozen("z")]
    cases: list[list[Any]] = [pieces, pieces[:2], [1, 2.0, "s"], [None], [()]]
    for items in cases:
        assert tu.all_leaves(items) == jtu.all_leaves(items)
        is_pair = lambda x: isinstance(x, Point)  # noqa: E731
        assert tu.all_leaves(items, is_leaf=is_pair) == jtu.all_leaves(items, is_leaf=is_pair)


@pytest.mark.oracle
def test_path_taking_is_leaf_matches_jax(jtu: ModuleType) -> None:
    t = {"a": [1, {"b": 2}], "c": (3, [4, 5]), "d": Point(6, [7])}

    def at_depth_two(path: tuple[Any, ...], _: Any) -> bool:
        return len(path) == 2

    pairs, treedef = tu.tree_flatten_with_path(t, at_depth_two, is_leaf_takes_path=True)
    j_pairs, j_treedef = jtu.tree_flatten_with_path(t, at_depth_two, is_leaf_takes_path=True)
    assert _paths(pairs) == _paths(j_pairs)
    assert _identical([x for _, x in pairs], [x for _, x in j_pairs])
    assert treedef.num_leaves == j_treedef.num_leaves
    assert _same(
        tu.tree_map_with_path(
            lambda p, x: keystr(p), t, is_leaf=at_depth_two, is_leaf_takes_path=True
        ),
        jtu.tree_map_with_path(
            lambda p, x: jtu.keystr(p), t, is_leaf=at_depth_two, is_leaf_takes_path=True
        ),
    )


@pytest.mark.oracle
def test_partial_matches_jax(jtu: ModuleType) -> None:
    inner = functools.partial(divmod, 17)
    cases: list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = [
        (operator.add, (1,), {}),
        (divmod, (), {}),
        (inner, (), {}),
        (sorted, ([3, 1],), {"key": None, "reverse": (True,)}),
    ]
    for func, args, kwargs in cases:
        mine, theirs = Partial(func, *args, **kwargs), jtu.Partial(func, *args, **kwargs)
        assert _identical(tu.tree_leaves(mine), jtu.tree_leaves(theirs))
        assert _paths(tu.tree_leaves_with_path(mine)) == _paths(jtu.tree_leaves_with_path(theirs))
    doubled = tu.tree_map(lambda x: 2 * x, Partial(operator.add, 1))
    assert type(doubled) is Partial
    assert doubled(5) == jtu.tree_map(lambda x: 2 * x, jtu.Partial(operator.add, 1))(5) == 7


@pytest.mark.oracle
@pytest.mark.parametrize(
    ("data_fields", "meta_fields", "drop_fields"),
    [
        (["x"], None, ()),
        (["x"], ["y"], ()),
        (["x", "y"], ["y"], ()),
        (["x"], [], ()),
        (["x", "y"], ["z"], ()),
        (["x"], [], ["y"]),
    ],
)
def test_register_dataclass_validates_fields_as_jax_does(
    jtu: ModuleType,
    data_fields: list[str] | None,
    meta_fields: list[str] | None,
    drop_fields: tuple[str, ...] | list[str],
) -> None:
    def make() -> type[Any]:
        @dataclasses.dataclass
        class XY:
            x: int
            y: int = 0

        return XY

    outcomes: list[type[Exception] | None] = []
    for register in (jtu.register_dataclass, tu.register_dataclass):
        try:
            register(make(), data_fields, meta_fields, drop_fields)
            outcomes.append(None)
        except (TypeError, ValueError) as err:
            outcomes.append(type(err))
    assert outcomes[0] == outcomes[1]


@st.composite
def _generated_trees(draw: st.DrawFn) -> Any:
    leaf = st.integers(-3, 3) | st.none()

    def extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        keys = st.text("abc", max_size=2)
        pairs = st.lists(st.tuples(keys, children), max_size=3)
        return (
            st.lists(children, max_size=3)
            | st.lists(children, max_size=3).map(tuple)
            | st.dictionaries(keys, children, max_size=3)
            | pairs.map(OD)
            | pairs.map(lambda kv: DD(list, kv))
            | st.builds(NT, children, children)
            | st.builds(Point, children, children)
            | st.builds(Params, children, children)
        )

    return draw(st.recursive(leaf, extend, max_leaves=10))


@settings(max_examples=80, derandomize=True, deadline=None)
@given(_generated_trees())
def test_unflatten_of_flatten_rebuilds_any_tree(t: Any) -> None:
    assert _same(tu.tree_unflatten(tu.tree_structure(t), tu.tree_leaves(t)), t)
    assert _same(tu.tree_map(lambda x: x, t), t)
    assert len(tu.tree_leaves_with_path(t)) == tu.tree_structure(t).num_leaves


@pytest.mark.oracle
@settings(max_examples=80, derandomize=True, deadline=None)
@given(_generated_trees())
def test_generated_trees_flatten_as_in_jax(jtu: ModuleType, t: Any) -> None:
    assert tu.tree_leaves(t) == jtu.tree_leaves(t)
    assert _paths(tu.tree_leaves_with_path(t)) == _paths(jtu.tree_leaves_with_path(t))


# ---------------------------------------------------------------------------------------------
# Unit tests


def test_key_classes_print_as_jax_keys() -> None:
    keys = (DictKey("a"), SequenceKey(0), GetAttrKey("x"), FlattenedIndexKey(2), DictKey(1))
    assert keystr(keys) == "['a'][0].x[<flat index 2>][1]"
    assert keystr(keys, simple=True, separator="/") == "a/0/x/2/1"
    assert repr(keys[0]) == "DictKey(key='a')"
    assert len({SequenceKey(0), FlattenedIndexKey(0), DictKey(0)}) == 3
    assert hash(DictKey("a")) == hash(DictKey("a"))


def test_dict_leaves_come_in_sorted_key_order_and_ordereddict_in_insertion_order() -> None:
    assert tu.tree_leaves({"b": 1, "a": 2, "c": 3}) == [2, 1, 3]
    assert tu.tree_leaves(OD([("b", 1), ("a", 2)])) == [1, 2]
    assert tu.tree_structure({"b": 0, "a": 0}) == tu.tree_structure({"a": 0, "b": 0})
    assert tu.tree_structure(OD(b=0, a=0)) != tu.tree_structure(OD(a=0, b=0))


def test_none_is_an_empty_subtree_unless_is_leaf_says_otherwise() -> None:
    assert tu.tree_leaves([None, 1, (None,)]) == [1]
    assert tu.tree_leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]
    assert tu.treedef_is_leaf(tu.tree_structure(None))
    assert tu.tree_map(lambda x: x + 1, {"a": None, "b": 1}) == {"a": None, "b": 2}


def test_registrations_stay_in_laminas_optree_namespace() -> None:
    assert tu.tree_leaves(Point(1, 2)) == [1, 2]
    point: Any = Point(1, 2)
    assert optree.tree_leaves(point) == [point]  # optree's global namespace


def test_registering_a_type_twice_is_an_error_naming_the_type() -> None:
    with pytest.raises(ValueError, match=r"cannot register .*Point.* at most once"):
        tu.register_pytree_node(Point, _point_flatten, _point_unflatten)
    with pytest.raises(ValueError, match="built-in containers cannot be registered"):
        tu.register_pytree_node(dict, lambda d: ((), None), lambda _, __: {})


def test_tree_map_error_names_the_key_path_and_both_types() -> None:
    with pytest.raises(ValueError) as info:
        tu.tree_map(lambda *xs: xs, {"a": 1, "b": [(2, 3)]}, {"a": 1, "b": [[2, 3]]})
    assert str(info.value) == (
        "pytree structure error: different types at key path\n    tree_map tree['b'][0]\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class 'tuple'>\nbut at the same key path the full pytree has a subtree of "
        "different type\n    <class 'list'>."
    )


@pytest.mark.oracle
@pytest.mark.parametrize(
    ("t", "rest"),
    [
        ({"a": 1, "b": 2}, [{"a": 1, "c": 2}]),  # same number of keys: the metadata differ
        ({"a": 1}, [{"a": 1, "b": 2}]),  # key counts differ: the odd keys listed
        (None, [None, 1]),  # the second of several trees
        ([1, (2, None)], [[1, (2, 3)]]),  # None is not a leaf
        (Box("x", 1, 2), [Box("y", 1, 2)]),  # a custom node's auxiliary data
        ({"k": [NT(1, 2), 3]}, [{"k": [NT(1, 2), (3,)]}, {"k": [NT(1, 2)]}]),
    ],
)
def test_tree_map_errors_are_jaxs_text(jtu: ModuleType, t: Any, rest: list[Any]) -> None:
    for ours, theirs, name in [
        (tu.tree_map, jtu.tree_map, "tree_map tree"),
        (tu.tree_map_with_path, jtu.tree_map_with_path, "tree_map_with_path tree"),
    ]:
        with pytest.raises(ValueError) as jax_error:
            theirs(lambda *xs: xs, t, *rest)
        with pytest.raises(ValueError) as our_error:
            ours(lambda *xs: xs, t, *rest)
        assert str(our_error.value) == str(jax_error.value)
        assert str(our_error.value).startswith("pytree structure error:")
        assert name in str(our_error.value)


def test_tree_map_broadcasts_prefix_leaves_over_subtrees() -> None:
    out = tu.tree_map(lambda x, y: (x, y), [1, 2], [(3, 4), {"k": 5}])
    assert out == [(1, (3, 4)), (2, {"k": 5})]
    stopped = tu.tree_map(
        lambda x, y: (x, y), [(1, 2), 3], [(4, 5), 6], is_leaf=lambda x: isinstance(x, tuple)
    )
    assert stopped == [((1, 2), (4, 5)), (3, 6)]


def test_tree_map_with_path_passes_key_paths_first() -> None:
    out = tu.tree_map_with_path(lambda p, x, y: f"{keystr(p)}={x + y}", {"a": [1]}, {"a": [2]})
    assert out == {"a": ["['a'][0]=3"]}


def test_register_dataclass_infers_static_fields_from_field_metadata() -> None:
    p = Params(w=1, b=2, activation="gelu")
    leaves, treedef = tu.tree_flatten(p)
    assert leaves == [1, 2]
    assert tu.tree_unflatten(treedef, [3, 4]) == Params(3, 4, "gelu")
    assert treedef != tu.tree_structure(Params(1, 2))
    assert [keystr(path) for path, _ in tu.tree_leaves_with_path(p)] == [".w", ".b"]


def test_register_dataclass_rejects_fields_that_do_not_cover_the_init_fields() -> None:
    @dataclasses.dataclass
    class XY:
        x: int
        y: int

    with pytest.raises(ValueError, match=r"missing \['y'\]"):
        tu.register_dataclass(XY, data_fields=["x"], meta_fields=[])
    with pytest.raises(TypeError, match="both data_fields and meta_fields or neither"):
        tu.register_dataclass(XY, data_fields=["x"])
    with pytest.raises(TypeError, match="not a dataclass"):
        tu.register_dataclass(Point)


def test_static_nodes_have_no_leaves_and_their_value_is_structure() -> None:
    assert tu.tree_leaves([Frozen("a"), 1]) == [1]
    assert tu.tree_structure(Frozen("a")) == tu.tree_structure(Frozen("a"))
    assert tu.tree_structure(Frozen("a")) != tu.tree_structure(Frozen("b"))


def test_partial_keeps_a_wrapped_partials_arguments_static() -> None:
    inner = functools.partial(divmod, 17)
    outer = Partial(inner, 5)
    assert tu.tree_leaves(outer) == [5]
    assert outer() == (3, 2)
    assert tu.tree_map(lambda x: x + 1, outer)() == (2, 5)


def test_reductions() -> None:
    assert tu.tree_reduce(operator.add, [1, (2, 3)]) == 6
    assert tu.tree_reduce(operator.add, [], 10) == 10
    with pytest.raises(TypeError):
        tu.tree_reduce(operator.add, [])
    assert tu.tree_reduce_associative(operator.add, (), identity=0) == 0
    with pytest.raises(TypeError, match="identity"):
        tu.tree_reduce_associative(operator.add, ())
    assert tu.tree_all([True, (1, None)])
    assert not tu.tree_all({"a": 0})


def test_tree_broadcast_rejects_a_non_prefix_with_a_pointed_error() -> None:
    assert tu.tree_broadcast((1, 2), (0, {"a": 0, "b": 0})) == (1, {"a": 2, "b": 2})
    with pytest.raises(ValueError, match="different lengths of tuple at key path\n    broadcast"):
        tu.tree_broadcast((1, 2), (0, 1, 2))


def test_build_tree_fills_a_treedef_from_nested_iterables() -> None:
    treedef = tu.tree_structure({"a": 0, "b": (0, NT(0, 0)), "c": None})
    assert tu.build_tree(treedef, [1, [2, [3, 4]], []]) == {"a": 1, "b": (2, NT(3, 4)), "c": None}
    with pytest.raises(ValueError, match="has 3 children"):
        tu.build_tree(treedef, [1, 2])


def test_treedef_helpers() -> None:
    parts = [
        tu.tree_structure(1),
        tu.tree_structure({"x": (1, None)}),
        tu.tree_structure(Point(1, 2)),
    ]
    assert tu.treedef_tuple(parts) == tu.tree_structure((1, {"x": (1, None)}, Point(1, 2)))
    assert tu.treedef_children(tu.treedef_tuple(parts)) == parts
    assert tu.treedef_is_leaf(tu.tree_structure(()))
    assert not tu.treedef_is_leaf(tu.tree_structure((1,)))


def test_known_difference_deque_is_a_node_in_lamina_but_a_leaf_in_jax() -> None:
    assert tu.tree_leaves(collections.deque([1, 2])) == [1, 2]


def test_known_difference_unflatten_keeps_the_flattened_dicts_key_order() -> None:
    leaves, treedef = tu.tree_flatten({"b": 1, "a": 2})
    assert leaves == [2, 1]
    assert list(tu.tree_unflatten(treedef, leaves)) == ["b", "a"]  # JAX gives ["a", "b"]


def test_tree_module_names_the_tree_util_functions() -> None:
    assert tree.map is tu.tree_map
    assert tree.flatten is tu.tree_flatten
    assert tree.broadcast is tu.tree_broadcast
    activation = dataclasses.fields(Params)[2]
    assert activation.metadata["static"] is True
    assert activation.default == "relu"


@pytest.mark.parametrize("module", [tu, _tree_registry, tree], ids=lambda m: m.__name__)
def test_docstring_examples_run(module: ModuleType) -> None:
    failed, attempted = doctest.testmod(module)
    assert attempted > 0
    assert failed == 0
