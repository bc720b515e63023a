"""`lax.optimization_barrier` and the small shape utilities against JAX 0.10.2: printed
jaxprs (also of its derivatives), values, errors; the rules three ways (JAX's values, JAX's
printed jaxpr, finite differences / a Python loop)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lamina_core as lc
from lamina_core import lax as ll

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.oracle
jl = jax.lax


def _both(f: Any, g: Any, *args: Any) -> None:
    assert str(lc.make_jaxpr(f)(*args)) == str(jax.make_jaxpr(g)(*args))


def test_barrier_prints_and_differentiates_as_jax() -> None:
    _both(
        lambda x: ll.optimization_barrier((x, x + 1)),
        lambda x: jl.optimization_barrier((x, x + 1)),
        1.0,
    )
    _both(
        lc.grad(lambda x: ll.optimization_barrier(x) * 2.0),
        jax.grad(lambda x: jl.optimization_barrier(x) * 2.0),
        1.0,
    )
    _both(
        lambda x: lc.jvp(ll.optimization_barrier, (x,), (x,)),
        lambda x: jax.jvp(jl.optimization_barrier, (x,), (x,)),
        1.0,
    )
    _both(
        lc.vmap(ll.optimization_barrier), jax.vmap(jl.optimization_barrier), np.ones(3, np.float32)
    )


def test_barrier_values_and_derivatives() -> None:
    x = np.array([1.0, -2.0, 3.0], np.float32)

    def f(x: Any) -> Any:
        a, b = ll.optimization_barrier((lc.numpy.sin(x), x * x))
        return lc.numpy.sum(a * b)

    got = lc.grad(f)(x)
    want = jax.grad(lambda x: jax.numpy.sum(jax.numpy.sin(x) * x * x))(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    eps = 1e-3
    fd = [
        (float(f(x + eps * e)) - float(f(x - eps * e))) / (2 * eps)
        for e in np.eye(3, dtype=np.float32)
    ]
    np.testing.assert_allclose(np.asarray(got), fd, rtol=1e-2)
    batched = lc.vmap(lambda r: ll.optimization_barrier(r * 2.0))(np.arange(6.0).reshape(2, 3))
    for i, row in enumerate(np.arange(6.0).reshape(2, 3)):
        np.testing.assert_array_equal(np.asarray(batched[i]), row * 2.0)
    assert ll.optimization_barrier({"a": 1.0, "b": [x]})["b"][0].shape == (3,)


@pytest.mark.parametrize(
    "shapes", [((2, 1), (3,)), ((), (4, 5)), ((1,), (1, 1)), ((6, 1, 2), (5, 1), (2,))]
)
def test_broadcast_shapes_is_jaxs(shapes: tuple[tuple[int, ...], ...]) -> None:
    assert ll.broadcast_shapes(*shapes) == jl.broadcast_shapes(*shapes)


def test_broadcast_shapes_error_is_jaxs() -> None:
    with pytest.raises(ValueError) as theirs:
        jl.broadcast_shapes((2,), (3,))
    with pytest.raises(ValueError) as mine:
        ll.broadcast_shapes((2,), (3,))
    assert str(mine.value) == str(theirs.value)


def test_small_utilities_are_jaxs() -> None:
    x = np.ones(2, np.float32)
    _both(lambda x: ll.broadcast_to_rank(x, 3), lambda x: jl.broadcast_to_rank(x, 3), x)
    for value in (np.int64(1), 1, 1.0, "float64", np.ones(2), np.float64, np.bool_(True), 1j):
        assert ll.dtype(value) == jl.dtype(value)
    for shape in ((), (2, 3), (5,)):
        got, want = ll.shape_as_value(shape), jl.shape_as_value(shape)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, np.asarray(want))
    src = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    idx = (np.array([0, -1, 4, 2]), np.array([1, 3, -2, 0]))
    got = ll.index_take(src, idx, (1, 2))
    want = jl.index_take(src, idx, (1, 2))
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
