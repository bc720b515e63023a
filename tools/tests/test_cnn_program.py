"""The breadth benchmark's CNN (conv, max pooling via reduce_window, dense) under jit on XLA:
JAX's values, JAX's program text and JAX's gradients — the breadth issue's end-to-end program."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina
from tools.bench.suites.breadth import cnn_problem

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.oracle


def test_cnn_forward_and_grad_match_jax() -> None:
    forward, params, images = cnn_problem(lamina)
    jforward, _, _ = cnn_problem(jax)
    images = images[:4]
    assert lamina.jit(forward).lower(params, images).as_text() == (
        jax.jit(jforward).lower(params, images).as_text()
    )
    np.testing.assert_allclose(
        np.asarray(lamina.jit(forward)(params, images)),
        np.asarray(jax.jit(jforward)(params, images)),
        rtol=1e-5,
        atol=1e-5,
    )

    def loss(api: Any, fwd: Any) -> Callable[[Any, Any], Any]:
        return lambda p, x: api.numpy.sum(fwd(p, x) ** 2)

    ours = lamina.jit(lamina.grad(loss(lamina, forward)))(params, images)
    theirs = jax.jit(jax.grad(loss(jax, jforward)))(params, images)
    for a, b in zip(lamina.tree.leaves(ours), jax.tree.leaves(theirs), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-4, atol=2e-4)
