"""Linearizing a `jit` whose outputs include its own inputs: as JAX's `_pjit_linearize`, the
primal call does not return them (the caller uses the inputs), unless the output asks for a
sharding; residuals that are inputs or primal outputs are not returned twice."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any, cast

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import lamina
import lamina.numpy as lnp

X = np.arange(1.0, 4.0, dtype=np.float32)
Program = Callable[[Any, Any], Callable[[Any], Any]]
Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def _jit(api: ModuleType) -> Decorator:
    return cast(Decorator, api.jit)


def forwards_an_int_and_a_float(api: ModuleType, np_: Any) -> Callable[[Any], Any]:
    @_jit(api)
    def g(x: Any, i: Any) -> Any:
        return x * 2, i, x

    def f(x: Any) -> Any:
        y, i, z = g(x, np_.arange(3))
        return (y * i * z).sum()

    return f


def forwards_only(api: ModuleType, np_: Any) -> Callable[[Any], Any]:
    @_jit(api)
    def g(x: Any) -> Any:
        return x, x

    def f(x: Any) -> Any:
        a, b = g(x)
        return (a * b).sum()

    return f


def forwards_a_residual_output(api: ModuleType, np_: Any) -> Callable[[Any], Any]:
    @_jit(api)
    def g(x: Any, y: Any) -> Any:
        s = np_.sin(x)
        return s, y, s * y

    def f(x: Any) -> Any:
        s, y, p = g(x, x + 1)
        return (s * p + y).sum()

    return f


def nested(api: ModuleType, np_: Any) -> Callable[[Any], Any]:
    @_jit(api)
    def inner(x: Any, y: Any) -> Any:
        return y, x * y

    @_jit(api)
    def outer(x: Any) -> Any:
        a, b = inner(x, np_.cos(x))
        return a * b

    return lambda x: outer(x).sum()


PROGRAMS: dict[str, Program] = {
    "an_int_and_a_float": forwards_an_int_and_a_float,
    "only": forwards_only,
    "a_residual_output": forwards_a_residual_output,
    "nested": nested,
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_grad_jaxpr_and_value_as_jax(name: str) -> None:
    ours, theirs = PROGRAMS[name](lamina, lnp), PROGRAMS[name](jax, jnp)
    assert str(lamina.make_jaxpr(lamina.grad(ours))(X)) == str(jax.make_jaxpr(jax.grad(theirs))(X))
    np.testing.assert_allclose(lamina.grad(ours)(X), jax.grad(theirs)(X), rtol=1e-6)
    np.testing.assert_allclose(lamina.jit(lamina.grad(ours))(X), jax.grad(theirs)(X), rtol=1e-6)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_vjp_and_linearize_jaxprs_as_jax(name: str) -> None:
    ours, theirs = PROGRAMS[name](lamina, lnp), PROGRAMS[name](jax, jnp)
    assert str(lamina.make_jaxpr(lambda x: lamina.vjp(ours, x)[1](1.0))(X)) == str(
        jax.make_jaxpr(lambda x: jax.vjp(theirs, x)[1](1.0))(X)
    )
    assert str(lamina.make_jaxpr(lambda x: lamina.linearize(ours, x)[1](x))(X)) == str(
        jax.make_jaxpr(lambda x: jax.linearize(theirs, x)[1](x))(X)
    )


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_grad_by_finite_differences(name: str) -> None:
    f = PROGRAMS[name](lamina, lnp)
    eps = 1e-3
    grad = np.asarray(lamina.grad(f)(X.astype(np.float32)))
    for k in range(X.size):
        step = np.zeros_like(X)
        step[k] = eps
        numeric = (float(f(X + step)) - float(f(X - step))) / (2 * eps)
        assert grad[k] == pytest.approx(numeric, rel=2e-2, abs=2e-2)
