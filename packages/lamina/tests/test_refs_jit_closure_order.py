"""Where a `jit` call passes the values its function closes over, against JAX 0.10.2: closing
over a tracer, every closed-over value (tracers, Refs made under the trace, Refs made outside
it) is a leading operand, in the order the trace met them; closing over Refs made outside
alone, they are trailing operands."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest

import lamina

pytestmark = pytest.mark.oracle


def _typed(decorator: Any) -> Callable[[Callable[..., Any]], Any]:
    """`decorator` (of JAX or Lamina, chosen at run time) as a typed decorator."""
    return decorator  # type: ignore[no-any-return]


def _closes_over_tracers_and_refs(L: Any) -> tuple[Callable[..., Any], Any]:
    jnp = L.numpy
    outer = L.new_ref(jnp.ones(()))

    def f(x: Any, y: Any) -> Any:
        r = L.new_ref(jnp.zeros(()))
        z = jnp.sin(y)

        @_typed(L.jit)
        def inner(x: Any) -> Any:
            r[...] += x
            outer[...] += 1.0
            return x * 2.0 + z

        return inner(x) + r[...] + outer[...]

    return f, outer


def _closes_over_an_outer_ref_only(L: Any) -> tuple[Callable[..., Any], Any]:
    jnp = L.numpy
    outer = L.new_ref(jnp.ones(()))

    @_typed(L.jit)
    def inner(x: Any) -> Any:
        outer[...] += x
        return x * 3.0

    def f(x: Any, y: Any) -> Any:
        return inner(x) * y

    return f, outer


@pytest.mark.parametrize(
    "program",
    [_closes_over_tracers_and_refs, _closes_over_an_outer_ref_only],
    ids=lambda p: p.__name__.strip("_"),
)
def test_jit_operands_are_in_jaxs_order(program: Callable[[Any], Any]) -> None:
    theirs, their_ref = program(jax)
    ours, our_ref = program(lamina)
    assert str(lamina.make_jaxpr(ours)(0.4, 1.0)) == str(jax.make_jaxpr(theirs)(0.4, 1.0))
    np.testing.assert_allclose(
        np.asarray(lamina.jit(ours)(0.4, 1.0)), np.asarray(jax.jit(theirs)(0.4, 1.0)), rtol=1e-6
    )
    np.testing.assert_allclose(np.asarray(our_ref[...]), np.asarray(their_ref[...]), rtol=1e-6)


def test_grad_through_a_jit_closing_over_a_tracer_and_refs() -> None:
    theirs, their_ref = _closes_over_tracers_and_refs(jax)
    ours, our_ref = _closes_over_tracers_and_refs(lamina)
    expected = jax.grad(theirs, argnums=(0, 1))(0.4, 1.0)
    got = lamina.grad(ours, argnums=(0, 1))(0.4, 1.0)
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(our_ref[...]), np.asarray(their_ref[...]), rtol=1e-6)
    assert str(lamina.make_jaxpr(lamina.grad(ours))(0.4, 1.0)) == str(
        jax.make_jaxpr(jax.grad(theirs))(0.4, 1.0)
    )


def test_a_ref_closed_over_and_passed_is_an_error_when_a_tracer_is_closed_over() -> None:
    def program(L: Any) -> Callable[..., Any]:
        jnp = L.numpy

        def f(x: Any) -> Any:
            r = L.new_ref(jnp.zeros(()))

            @_typed(L.jit)
            def inner(x: Any, s: Any) -> Any:
                r[...] += x
                return s[...]

            return inner(x, r)

        return f

    with pytest.raises(ValueError) as theirs:
        jax.make_jaxpr(program(jax))(0.4)
    with pytest.raises(ValueError) as ours:
        lamina.make_jaxpr(program(lamina))(0.4)
    assert str(ours.value) == str(theirs.value)
