"""`lamina.nn` run on XLA (jitted and eager), against `jax.nn`'s numbers and gradients."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina

jax = pytest.importorskip("jax")

X = np.array([-7.0, -2.0, -1.0, 0.0, 0.5, 1.0, 3.0, 6.0, 7.0], np.float32)
M = np.array([[1.0, 2.0, -3.0, 0.5], [0.0, 0.5, 1.0, -3.0], [4.0, -1.0, 2.0, 2.0]], np.float32)
MASK = np.array([[True, False, True, True], [True, True, False, False], [False, True, True, True]])

CASES: list[tuple[str, Callable[[Any], Callable[..., Any]], tuple[Any, ...]]] = [
    ("relu", lambda nn: nn.relu, (X,)),
    ("relu6", lambda nn: nn.relu6, (X,)),
    ("gelu", lambda nn: nn.gelu, (X,)),
    ("gelu_exact", lambda nn: lambda x: nn.gelu(x, approximate=False), (X,)),
    ("silu", lambda nn: nn.silu, (X,)),
    ("mish", lambda nn: nn.mish, (X,)),
    ("selu", lambda nn: nn.selu, (X,)),
    ("hard_swish", lambda nn: nn.hard_swish, (X,)),
    ("log_sigmoid", lambda nn: nn.log_sigmoid, (X,)),
    ("sparse_plus", lambda nn: nn.sparse_plus, (X,)),
    ("log1mexp", lambda nn: nn.log1mexp, (np.abs(X) + 0.1,)),
    ("softmax_where", lambda nn: lambda x, w: nn.softmax(x, where=w), (M, MASK)),
    ("log_softmax", lambda nn: lambda x: nn.log_softmax(x, axis=0), (M,)),
    ("logsumexp", lambda nn: lambda x: nn.logsumexp(x, axis=1), (M,)),
    ("logmeanexp", lambda nn: lambda x, w: nn.logmeanexp(x, axis=1, where=w), (M, MASK)),
    ("standardize", lambda nn: nn.standardize, (M,)),
    ("glu", lambda nn: nn.glu, (M,)),
]


# One function in three on XLA by default (lamina-core's tests check every one of them against
# JAX); all of them with the slow tests.
@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, id=c[0], marks=() if i % 3 == 0 else pytest.mark.slow)
        for i, c in enumerate(CASES)
    ],
)
def test_values_and_grads_on_xla(case: Any) -> None:
    _, call, args = case
    ours, theirs = call(lamina.nn), call(jax.nn)
    want = np.asarray(theirs(*args))
    np.testing.assert_allclose(np.asarray(lamina.jit(ours)(*args)), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(ours(*args)), want, rtol=1e-5, atol=1e-6)
    grad_ours = lamina.jit(lamina.grad(lambda *a: (ours(*a) ** 2).sum()))
    grad_theirs = jax.grad(lambda *a: (theirs(*a) ** 2).sum())
    np.testing.assert_allclose(
        np.asarray(grad_ours(*args)), np.asarray(grad_theirs(*args)), rtol=1e-5, atol=1e-6
    )


def test_one_hot_on_xla() -> None:
    labels = np.array([0, 3, 1, 7], np.int32)
    got = lamina.jit(lambda x: lamina.nn.one_hot(x, 4, axis=0))(labels)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(jax.nn.one_hot(labels, 4, axis=0)))


def test_initializers_on_xla() -> None:
    init_ours = lamina.nn.initializers.he_uniform()
    init_theirs = jax.nn.initializers.he_uniform()
    got = lamina.jit(lambda k: init_ours(k, (4, 6)))(lamina.random.key(1))
    want = init_theirs(jax.random.key(1), (4, 6))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


@pytest.mark.parametrize("static", [{}, {"is_causal": True}, {"local_window_size": (1, 0)}])
def test_dot_product_attention_on_xla(static: dict[str, Any]) -> None:
    rng = np.random.default_rng(1)
    q, k, v = (rng.normal(size=(2, 4, 2, 8)).astype(np.float32) for _ in range(3))
    got = lamina.jit(lambda q, k, v: lamina.nn.dot_product_attention(q, k, v, **static))(q, k, v)
    want = jax.nn.dot_product_attention(q, k, v, **static)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)
    grad_ours = lamina.jit(
        lamina.grad(lambda q: (lamina.nn.dot_product_attention(q, k, v, **static) ** 2).sum())
    )
    grad_jax = jax.grad(lambda q: (jax.nn.dot_product_attention(q, k, v, **static) ** 2).sum())
    np.testing.assert_allclose(
        np.asarray(grad_ours(q)), np.asarray(grad_jax(q)), rtol=1e-4, atol=1e-5
    )
