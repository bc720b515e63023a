"""`jnp.sinc` against JAX 0.10.2: its jaxpr (a `jit` holding the `_sinc_maclaurin` custom_jvp
that gives every derivative at zero its Maclaurin term), values, and derivatives of several
orders at and away from zero."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lamina_core as lc
from lamina_core.numpy import _shape_more
from lamina_core.trace._values import to_numpy

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.oracle
jnp = jax.numpy


@pytest.mark.parametrize(
    "x",
    [np.ones(3, np.float32), np.float32(0.5), np.arange(4, dtype=np.int32)],
    ids=["f32_vector", "f32_scalar", "i32_vector"],
)
def test_jaxpr_prints_as_jax(x: Any) -> None:
    assert str(lc.make_jaxpr(_shape_more.sinc)(x)) == str(jax.make_jaxpr(jnp.sinc)(x))


def test_values_match_jax_including_zero() -> None:
    x = np.array([-2.5, -1.0, -1e-8, 0.0, 1e-8, 0.25, 3.0], np.float32)
    got = np.asarray(to_numpy(_shape_more.sinc(x)))
    np.testing.assert_allclose(got, np.asarray(jnp.sinc(x)), rtol=1e-6, atol=1e-7)
    assert got.dtype == np.float32


@pytest.mark.parametrize("order", [1, 2, 3, 4])
@pytest.mark.parametrize("at", [0.0, 0.3, -1.25])
def test_derivatives_match_jax(order: int, at: float) -> None:
    mine: Any = _shape_more.sinc
    theirs: Any = jnp.sinc
    for _ in range(order):
        mine, theirs = lc.grad(mine), jax.grad(theirs)
    got = float(to_numpy(mine(np.float32(at))))
    np.testing.assert_allclose(got, float(theirs(np.float32(at))), rtol=2e-4, atol=1e-5)


def test_second_derivative_at_zero_is_the_series_term() -> None:
    # sin(pi x)/(pi x) = 1 - (pi x)^2/6 + ...: the second derivative at 0 is -pi^2/3.
    second = lc.grad(lc.grad(_shape_more.sinc))(np.float32(0.0))
    np.testing.assert_allclose(float(to_numpy(second)), -(np.pi**2) / 3, rtol=1e-6)


def test_first_derivative_by_finite_differences() -> None:
    x, h = 0.37, 1e-3
    fd = (np.sinc(x + h) - np.sinc(x - h)) / (2 * h)
    got = float(to_numpy(lc.grad(_shape_more.sinc)(np.float32(x))))
    np.testing.assert_allclose(got, fd, rtol=1e-3)
