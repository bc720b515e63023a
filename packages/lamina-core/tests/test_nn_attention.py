"""`lamina_core.nn.dot_product_attention` (XLA path) against `jax.nn`'s: jaxprs, values, grads."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import lamina_core
from lamina_core.nn import dot_product_attention

pytestmark = pytest.mark.oracle

jax = pytest.importorskip("jax")

_rng = np.random.default_rng(0)
Q = _rng.normal(size=(2, 3, 4, 8)).astype(np.float32)
K = _rng.normal(size=(2, 5, 2, 8)).astype(np.float32)
V = _rng.normal(size=(2, 5, 2, 8)).astype(np.float32)

# Optional arrays are traced arguments: JAX stages operations on concrete arrays, Lamina folds them.
CASES: list[tuple[str, dict[str, Any]]] = [
    ("plain", {}),
    ("bias_per_head", {"bias": _rng.normal(size=(2, 4, 3, 5)).astype(np.float32)}),
    ("bias_broadcast", {"bias": _rng.normal(size=(1, 1, 3, 5)).astype(np.float32)}),
    ("mask", {"mask": _rng.random(size=(2, 1, 3, 5)) > 0.3}),
    (
        "seq_lengths",
        {
            "query_seq_lengths": np.array([2, 3], np.int32),
            "key_value_seq_lengths": np.array([5, 1], np.int32),
        },
    ),
]


def _call(attention: Any, residual: bool) -> Any:
    return lambda q, k, v, kw: attention(q, k, v, return_residual=residual, **kw)


@pytest.mark.parametrize("residual", [False, True])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_attention_matches_jax(case: tuple[str, dict[str, Any]], residual: bool) -> None:
    kw = case[1]
    ours, theirs = (
        _call(dot_product_attention, residual),
        _call(jax.nn.dot_product_attention, residual),
    )
    assert str(lamina_core.make_jaxpr(ours)(Q, K, V, kw)) == str(
        jax.make_jaxpr(theirs)(Q, K, V, kw)
    )
    for got, want in zip(
        jax.tree_util.tree_leaves(ours(Q, K, V, kw)),
        jax.tree_util.tree_leaves(theirs(Q, K, V, kw)),
        strict=True,
    ):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_attention_grad_matches_jax(case: tuple[str, dict[str, Any]]) -> None:
    kw = case[1]
    ours_loss = lambda q, k, v, kw: (dot_product_attention(q, k, v, **kw) ** 2).sum()  # noqa: E731
    theirs_loss = lambda q, k, v, kw: (jax.nn.dot_product_attention(q, k, v, **kw) ** 2).sum()  # noqa: E731
    ours = lamina_core.grad(ours_loss, argnums=(0, 1, 2))
    theirs = jax.grad(theirs_loss, argnums=(0, 1, 2))
    assert str(lamina_core.make_jaxpr(ours)(Q, K, V, kw)) == str(
        jax.make_jaxpr(theirs)(Q, K, V, kw)
    )
    want_all = jax.jit(lambda q, k, v: theirs(q, k, v, kw))(Q, K, V)  # one compile
    for got, want in zip(ours(Q, K, V, kw), want_all, strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("static", [{"implementation": "xla", "scale": 0.5}, {"scale": 2}])
def test_static_options_match_jax(static: dict[str, Any]) -> None:
    ours = lamina_core.make_jaxpr(lambda q, k, v: dot_product_attention(q, k, v, **static))
    theirs = jax.make_jaxpr(lambda q, k, v: jax.nn.dot_product_attention(q, k, v, **static))
    assert str(ours(Q, K, V)) == str(theirs(Q, K, V))
    got = dot_product_attention(Q, K, V, **static)
    want = jax.nn.dot_product_attention(Q, K, V, **static)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "static", [{"local_window_size": (1, 2)}, {"local_window_size": 1}, {"is_causal": True}]
)
def test_constant_masks_values(static: dict[str, Any]) -> None:
    # The jaxprs differ: JAX stages ops on its constant position arrays, Lamina folds them.
    got = dot_product_attention(Q, K, V, **static)
    want = jax.nn.dot_product_attention(Q, K, V, **static)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)
    ours_grad = lamina_core.grad(lambda q: (dot_product_attention(q, K, V, **static) ** 2).sum())
    jax_grad = jax.jit(
        jax.grad(lambda q: (jax.nn.dot_product_attention(q, K, V, **static) ** 2).sum())
    )
    np.testing.assert_allclose(
        np.asarray(ours_grad(Q)), np.asarray(jax_grad(Q)), rtol=1e-4, atol=1e-5
    )


BAD: list[tuple[str, dict[str, Any], tuple[Any, ...]]] = [
    ("cudnn_on_cpu", {"implementation": "cudnn"}, (Q, K, V)),
    ("implementation", {"implementation": "tpu"}, (Q, K, V)),
    ("heads", {}, (Q[:, :, :3], K, V)),
    ("value_shape", {}, (Q, K, V[:, :4])),
    ("mask_dtype", {"mask": np.ones((1, 1, 3, 5), np.int32)}, (Q, K, V)),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_bad_arguments_raise_as_jax(case: tuple[str, dict[str, Any], tuple[Any, ...]]) -> None:
    _, kw, args = case
    with pytest.raises(Exception) as want:
        jax.nn.dot_product_attention(*args, **kw)
    with pytest.raises(type(want.value), match=re.escape(str(want.value))):
        dot_product_attention(*args, **kw)
