"""Smaller pieces of JAX's public API that downstream libraries use (issue 35, item 2), each
against JAX: `jit(device=, backend=)`, `dtypes.prng_key`, `issubdtype(None, ...)`,
`jnp.where(condition)`, `live_arrays`, `__version_info__`, and treedefs from the public pytree
API printing as JAX's."""

from __future__ import annotations

import collections
import warnings
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest

import lamina

# ---- jit(device=, backend=) -----------------------------------------------------------------


def _jit_outcome(api: Any, **options: Any) -> tuple[Any, ...]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            f = api.jit(lambda x: x * 2, **options)
        except ValueError as err:
            return ("ValueError", str(err), [str(w.message) for w in caught])
        jaxpr = str(api.make_jaxpr(f)(1.0))
        out = f(api.numpy.ones(2))
        return (
            np.asarray(out).tolist(),
            repr(out.sharding),
            jaxpr,
            [(w.category.__name__, str(w.message)) for w in caught],
        )


@pytest.mark.parametrize(
    "options",
    [
        {"device": "first"},
        {"backend": "cpu"},
        {"device": "first", "backend": "cpu"},
        {"device": "first", "in_shardings": "sharding"},
        {"backend": "cpu", "out_shardings": "sharding"},
    ],
    ids=["device", "backend", "both", "device with in_shardings", "backend with out_shardings"],
)
def test_jit_device_and_backend_as_jax(options: dict[str, str]) -> None:
    def resolve(api: Any) -> dict[str, Any]:
        device = api.devices()[0]
        values = {
            "first": device,
            "cpu": "cpu",
            "sharding": api.sharding.SingleDeviceSharding(device),
        }
        return {k: values[v] for k, v in options.items()}

    assert _jit_outcome(lamina, **resolve(lamina)) == _jit_outcome(jax, **resolve(jax))


def test_jit_with_an_absent_backend_fails_when_called_as_jax() -> None:
    errors = []
    for api in (lamina, jax):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            f = api.jit(lambda x: x, backend="gpu")  # made without error
        with pytest.raises(RuntimeError) as info:
            f(1.0)
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_jit_with_a_device_composes_with_transformations() -> None:
    device = lamina.devices()[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        f = lamina.jit(lambda x: x * x, device=device)
    assert float(lamina.grad(f)(3.0)) == 6.0
    assert np.asarray(lamina.vmap(f)(lamina.numpy.arange(3.0))).tolist() == [0.0, 1.0, 4.0]


# ---- dtypes ---------------------------------------------------------------------------------


def _dtype_answers(api: Any) -> list[Any]:
    jnp, dtypes = api.numpy, api.dtypes
    key, raw = api.random.key(0), api.random.PRNGKey(0)
    rbg = api.random.key(0, impl="rbg")
    pairs = [
        (key.dtype, dtypes.prng_key),
        (key.dtype, np.generic),
        (key.dtype, np.integer),
        (key.dtype, key.dtype),
        (key.dtype, rbg.dtype),
        (rbg.dtype, dtypes.prng_key),
        (raw.dtype, dtypes.prng_key),
        (jnp.float32, dtypes.prng_key),
        (dtypes.prng_key, np.generic),
        (None, np.floating),
        (None, np.float64),
        (None, np.float32),
        (np.float64, None),
        (None, None),
        (None, dtypes.prng_key),
    ]
    return [jnp.issubdtype(a, b) for a, b in pairs] + [dtypes.issubdtype(a, b) for a, b in pairs]


def test_prng_key_dtype_and_issubdtype_of_none_as_jax() -> None:
    assert _dtype_answers(lamina) == _dtype_answers(jax)
    assert lamina.dtypes.prng_key.__name__ == "prng_key"


# ---- jnp.where with one argument -------------------------------------------------------------

WHERE: list[tuple[str, Callable[[Any], Any]]] = [
    ("nonzero form", lambda jnp: jnp.where(jnp.arange(10) > 4)),
    ("2-d", lambda jnp: jnp.where(jnp.eye(3))),
    ("size and fill_value", lambda jnp: jnp.where(jnp.arange(10) > 4, size=7, fill_value=-1)),
    ("size truncates", lambda jnp: jnp.where(jnp.arange(10) > 4, size=2)),
    ("fill per axis", lambda jnp: jnp.where(jnp.eye(2), size=3, fill_value=(7, 8))),
    ("three-term with size", lambda jnp: jnp.where(jnp.ones(2) > 0, 1, 2, size=3)),
    ("only x", lambda jnp: jnp.where(jnp.ones(2) > 0, 1)),
    ("scalar condition", lambda jnp: jnp.where(True)),
]


def _result(fn: Callable[[], Any]) -> Any:
    try:
        out = fn()
    except Exception as err:
        return type(err).__name__, str(err).split("\n")[0]
    return [(np.asarray(x).tolist(), str(x.dtype)) for x in out]


@pytest.mark.parametrize(("name", "case"), WHERE, ids=[n for n, _ in WHERE])
def test_where_with_condition_only_as_jax(name: str, case: Callable[[Any], Any]) -> None:
    assert _result(lambda: case(lamina.numpy)) == _result(lambda: case(jax.numpy))


def test_where_with_size_under_jit_as_jax() -> None:
    def program(api: Any) -> Any:
        return api.jit(lambda x: api.numpy.where(x > 4, size=3, fill_value=9))(api.numpy.arange(8))

    assert _result(lambda: program(lamina)) == _result(lambda: program(jax))


# ---- live_arrays, __version_info__ ----------------------------------------------------------


def test_live_arrays_lists_the_arrays_alive() -> None:
    before = len(lamina.live_arrays())
    kept = [lamina.numpy.arange(5.0) + i for i in range(3)]
    alive = lamina.live_arrays()
    assert len(alive) >= before + 3
    assert all(isinstance(a, lamina.Array) for a in alive)
    values = [np.asarray(a).tolist() for a in alive if a.shape == (5,)]
    assert all(np.asarray(k).tolist() in values for k in kept)
    assert len(lamina.live_arrays("cpu")) == len(lamina.live_arrays())
    del kept, alive
    assert len(lamina.live_arrays()) <= before + 1


def test_version_info_is_a_tuple_of_ints_as_jaxs() -> None:
    assert type(lamina.__version_info__) is type(jax.__version_info__) is tuple
    assert lamina.__version_info__ == tuple(int(p) for p in lamina.__version__.split("."))
    assert "__version_info__" in lamina.__all__


# ---- treedefs of the public API -------------------------------------------------------------

Point = collections.namedtuple("Point", ["x", "y"])


class Node:
    def __init__(self, a: Any, b: Any) -> None:
        self.a, self.b = a, b


lamina.tree_util.register_pytree_node(Node, lambda n: ((n.a, n.b), "aux"), lambda _, c: Node(*c))
jax.tree_util.register_pytree_node(Node, lambda n: ((n.a, n.b), "aux"), lambda _, c: Node(*c))

TREES: list[Any] = [
    1,
    None,
    (1,),
    [1, None, ()],
    {"b": 1, "a": (2, None)},
    Point(1, (2,)),
    collections.OrderedDict([("z", 1), ("a", 2)]),
    collections.defaultdict(list, {"a": 1}),
    Node(1, [2, {"k": Point(None, 3)}]),
]


@pytest.mark.parametrize("tree", TREES)
def test_public_treedefs_print_as_jaxs(tree: Any) -> None:
    pairs: list[tuple[Callable[[Any], Any], Callable[[Any], Any]]] = [
        (lamina.tree_util.tree_structure, jax.tree_util.tree_structure),
        (lambda t: lamina.tree_util.tree_flatten(t)[1], lambda t: jax.tree_util.tree_flatten(t)[1]),
        (lamina.tree.structure, jax.tree.structure),
        (lambda t: lamina.tree.flatten(t)[1], lambda t: jax.tree.flatten(t)[1]),
        (
            lambda t: lamina.tree_util.tree_flatten_with_path(t)[1],
            lambda t: jax.tree_util.tree_flatten_with_path(t)[1],
        ),
    ]
    for ours, theirs in pairs:
        assert repr(ours(tree)) == repr(theirs(tree)) == str(ours(tree))
    children = lamina.tree_util.treedef_children(lamina.tree_util.tree_structure(tree))
    j_children = jax.tree_util.treedef_children(jax.tree_util.tree_structure(tree))
    assert [str(c) for c in children] == [str(c) for c in j_children]
    pair = lamina.tree_util.treedef_tuple([lamina.tree_util.tree_structure(tree)] * 2)
    j_pair = jax.tree_util.treedef_tuple([jax.tree_util.tree_structure(tree)] * 2)
    assert str(pair) == str(j_pair)


def test_public_treedefs_work_where_treedefs_do() -> None:
    treedef = lamina.tree_util.tree_structure({"a": 1, "b": (2, 3)})
    assert lamina.tree_util.tree_unflatten(treedef, [4, 5, 6]) == {"a": 4, "b": (5, 6)}
    assert treedef.num_leaves == 3 and treedef == lamina.tree_util.tree_structure(
        {"a": 0, "b": (0, 0)}
    )
    # Hashable and comparable: usable as a static argument.
    leaves = lamina.jit(lambda t, x: t.num_leaves * x, static_argnums=0)(treedef, 2.0)
    assert float(leaves) == 6.0
    j_treedef: Any = jax.tree_util.tree_structure({"a": 1, "b": (2, 3)})
    composed = treedef.compose(lamina.tree_util.tree_structure((1, 2)))
    assert str(composed) == str(j_treedef.compose(jax.tree_util.tree_structure((1, 2))))
