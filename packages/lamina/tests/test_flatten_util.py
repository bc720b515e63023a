"""`lamina.flatten_util.ravel_pytree` against `jax.flatten_util.ravel_pytree` (issue 35, item
2): the flat vector (order, dtype promotion), the unravelled tree, the unravel function's
errors, its equality, and the jaxprs both print."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.flatten_util
import numpy as np
import pytest

import lamina
import lamina.flatten_util

TREES: list[tuple[str, Callable[[Any], Any]]] = [
    ("mixed dtypes", lambda jnp: {"b": jnp.arange(3), "a": (jnp.ones((2, 2)), 2.0)}),
    ("empty dict", lambda jnp: {}),
    ("only empty nodes", lambda jnp: [None, ()]),
    ("python ints", lambda jnp: [1, 2]),
    ("python scalars", lambda jnp: (1.0, 2)),
    ("narrow floats", lambda jnp: [jnp.ones(2, jnp.bfloat16), jnp.ones(1, jnp.float16)]),
    ("bool and int8", lambda jnp: [jnp.array([True, False]), jnp.int8(3)]),
    ("complex and real", lambda jnp: [jnp.ones(1, jnp.complex64), 1.5]),
    ("numpy leaves", lambda jnp: [np.ones(2, np.float64), np.int64(3)]),
    ("unsigned and signed", lambda jnp: [jnp.uint32(1), jnp.int32(2)]),
    ("one dtype", lambda jnp: {"x": jnp.ones((2, 3)), "y": [jnp.zeros(4)]}),
]


def _host(tree: Any) -> Any:
    return jax.tree_util.tree_map(
        lambda a: (np.asarray(a).tolist(), str(np.asarray(a).dtype)), tree
    )


@pytest.mark.parametrize(("name", "make"), TREES, ids=[n for n, _ in TREES])
def test_ravel_and_unravel_as_jax(name: str, make: Callable[[Any], Any]) -> None:
    flat, unravel = lamina.flatten_util.ravel_pytree(make(lamina.numpy))
    j_flat, j_unravel = jax.flatten_util.ravel_pytree(make(jax.numpy))
    assert flat.dtype == j_flat.dtype and flat.weak_type == j_flat.weak_type
    np.testing.assert_array_equal(np.asarray(flat), np.asarray(j_flat))
    back, j_back = unravel(flat), j_unravel(j_flat)
    assert str(jax.tree_util.tree_structure(back)) == str(jax.tree_util.tree_structure(j_back))
    assert sorted(map(str, jax.tree_util.tree_leaves(_host(back)))) == sorted(
        map(str, jax.tree_util.tree_leaves(_host(j_back)))
    )


def _error(fn: Callable[[], Any]) -> tuple[str, str]:
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value).__name__, str(info.value).split("\n")[0]


@pytest.mark.parametrize(
    ("make", "vector"),
    [
        (lambda jnp: {"a": jnp.arange(3), "b": jnp.ones(2)}, lambda jnp: jnp.arange(5)),  # dtype
        (lambda jnp: {"a": jnp.arange(3), "b": jnp.ones(2)}, lambda jnp: jnp.ones(3)),  # short
        (lambda jnp: {"a": jnp.arange(3), "b": jnp.ones(2)}, lambda jnp: jnp.ones(9)),  # long
        (lambda jnp: [jnp.ones(2), jnp.zeros(3)], lambda jnp: jnp.ones(4)),  # one dtype, short
    ],
)
def test_unravel_errors_as_jax(make: Callable[[Any], Any], vector: Callable[[Any], Any]) -> None:
    unravel = lamina.flatten_util.ravel_pytree(make(lamina.numpy))[1]
    j_unravel = jax.flatten_util.ravel_pytree(make(jax.numpy))[1]
    assert _error(lambda: unravel(vector(lamina.numpy))) == _error(
        lambda: j_unravel(vector(jax.numpy))
    )


def test_one_dtype_unravel_takes_any_dtype_as_jax() -> None:
    unravel = lamina.flatten_util.ravel_pytree([lamina.numpy.ones(2), lamina.numpy.zeros(3)])[1]
    j_unravel = jax.flatten_util.ravel_pytree([jax.numpy.ones(2), jax.numpy.zeros(3)])[1]
    ours, theirs = unravel(lamina.numpy.arange(5)), j_unravel(jax.numpy.arange(5))
    assert [str(x.dtype) for x in ours] == [str(x.dtype) for x in theirs] == ["int32", "int32"]
    assert lamina.flatten_util.ravel_pytree({})[1](lamina.numpy.ones(3)) == {}


def test_unravel_functions_are_values() -> None:
    def make() -> Any:
        return {"a": lamina.numpy.ones(2), "b": 1}

    first, second = (
        lamina.flatten_util.ravel_pytree(make())[1],
        lamina.flatten_util.ravel_pytree(make())[1],
    )
    assert first == second and hash(first) == hash(second)
    assert first != lamina.flatten_util.ravel_pytree({"a": lamina.numpy.ones(3), "b": 1})[1]


def test_under_transformations_jaxprs_are_jaxs() -> None:
    def program(api: Any, ravel: Any) -> str:
        tree = {"a": 1.0, "b": api.numpy.ones(2, api.numpy.int32)}

        def f(t: Any, v: Any) -> Any:
            flat, unravel = ravel(t)
            return flat, unravel(v)

        return str(api.make_jaxpr(f)(tree, api.numpy.ones(3)))

    assert program(lamina, lamina.flatten_util.ravel_pytree) == program(
        jax, jax.flatten_util.ravel_pytree
    )
    grads = lamina.grad(lambda t: lamina.flatten_util.ravel_pytree(t)[0].sum())(
        {"a": 1.0, "b": lamina.numpy.ones(2)}
    )
    j_grads = jax.grad(lambda t: jax.flatten_util.ravel_pytree(t)[0].sum())(
        {"a": 1.0, "b": jax.numpy.ones(2)}
    )
    assert _host(grads) == _host(j_grads)
    assert grads["a"].weak_type == j_grads["a"].weak_type
