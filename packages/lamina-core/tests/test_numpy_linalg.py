"""`lamina_core.numpy.linalg` against `jax.numpy.linalg`: printed jaxprs and values of every
norm order Lamina has, and JAX's errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lamina_core
from lamina_core.numpy import linalg as la

jax = pytest.importorskip("jax")

pytestmark = pytest.mark.oracle

X = np.array([[3.0, -4.0, 0.5], [1.0, 2.0, -2.0]], np.float32)
CASES: list[dict[str, Any]] = [
    {},
    {"axis": -1},
    {"axis": 0, "ord": np.inf},
    {"ord": 1, "axis": 1},
    {"ord": 0, "axis": 1},
    {"ord": 3, "axis": 1},
    {"ord": -np.inf, "axis": 1, "keepdims": True},
    {"ord": "fro"},
    {"ord": 1},
    {"ord": np.inf},
    {"ord": -1, "axis": (1, 0)},
    {"ord": -np.inf, "keepdims": True},
    {"ord": 1.5, "axis": 0},
]


@pytest.mark.parametrize("kwargs", CASES, ids=[str(c) for c in CASES])
def test_norm_prints_and_computes_as_jax(kwargs: dict[str, Any]) -> None:
    ours = lamina_core.make_jaxpr(lambda x: la.norm(x, **kwargs))(X)
    theirs = jax.make_jaxpr(lambda x: jax.numpy.linalg.norm(x, **kwargs))(X)
    assert str(ours) == str(theirs)
    np.testing.assert_allclose(
        np.asarray(la.norm(X, **kwargs)),
        np.asarray(jax.numpy.linalg.norm(X, **kwargs)),
        rtol=1e-6,
    )


@pytest.mark.parametrize("order", [2, np.inf, 0, 1, -np.inf, 4])
def test_vector_norm_as_jax(order: Any) -> None:
    ours = lamina_core.make_jaxpr(lambda x: la.vector_norm(x, ord=order))(X)
    theirs = jax.make_jaxpr(lambda x: jax.numpy.linalg.vector_norm(x, ord=order))(X)
    assert str(ours) == str(theirs)


def test_norm_of_integers_promotes_as_jax() -> None:
    got = la.norm(np.arange(4))
    want = jax.numpy.linalg.norm(np.arange(4))
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"ord": "inf", "axis": 0}, ValueError),
        ({"ord": "bad"}, ValueError),
        ({"axis": (0, 1, 0)}, ValueError),
    ],
)
def test_norm_errors_as_jax(kwargs: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error) as theirs:
        jax.numpy.linalg.norm(X, **kwargs)
    with pytest.raises(error) as ours:
        la.norm(X, **kwargs)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("ord", ["nuc", 2, -2])
def test_matrix_norms_of_singular_values(ord: Any) -> None:
    # Values here; printed jaxprs in test_lax_linalg_decomp.
    want = jax.numpy.linalg.norm(X, ord=ord)
    np.testing.assert_allclose(la.norm(X, ord=ord), want, rtol=1e-5)
