"""`jax_debug_nans` / `jax_debug_infs` where a jitted function runs under a transformation
(issue 41, item 1): `grad`, `vmap`, `jvp` and a backward pass apply the `jit` equation
eagerly; a bad value it makes names the primitive inside it, as JAX's `FloatingPointError`
does (JAX runs the function again de-optimized; Lamina evaluates the equation's jaxpr op by
op). The top-level cases are in test_toplevel_names.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest

import lamina

pytestmark = pytest.mark.oracle

_DEOPTIMIZED = (
    "Invalid nan value encountered in the output of a jax.jit function. "
    "Calling the de-optimized version."
)


def _where_sqrt(m: Any) -> Callable[[Any], Any]:
    return lambda x: m.numpy.where(x > 0, m.numpy.sqrt(x), 0.0)


def _nested(m: Any) -> Any:
    inner = m.jit(_where_sqrt(m))
    return m.jit(lambda x: inner(x) * 2)


CASES: dict[str, Callable[[Any], Any]] = {
    "grad": lambda m: m.grad(m.jit(_where_sqrt(m)))(-1.0),
    "grad_nested": lambda m: m.grad(_nested(m))(-1.0),
    "vmap": lambda m: m.vmap(m.jit(m.numpy.log))(m.numpy.arange(-1.0, 2.0)),
    "jvp": lambda m: m.jvp(m.jit(m.numpy.log), (-1.0,), (1.0,)),
    "vjp": lambda m: m.vjp(m.jit(m.numpy.log), -1.0),
    "cond": lambda m: m.grad(m.jit(lambda x: m.lax.cond(x < 0, m.numpy.log, m.numpy.sin, x)))(-1.0),
}


def _raised(m: Any, case: Callable[[Any], Any], capsys: pytest.CaptureFixture[str]) -> Any:
    with m.debug_nans(True):
        try:
            case(m)
        except FloatingPointError as err:
            return err, capsys.readouterr().out.splitlines()
    raise AssertionError("no FloatingPointError")


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_transformed_jit_names_the_primitive_as_jax(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    theirs, their_out = _raised(jax, CASES[name], capsys)
    ours, our_out = _raised(lamina, CASES[name], capsys)
    assert type(ours) is type(theirs) is FloatingPointError
    assert str(ours) == str(theirs)
    assert "encountered in jit" not in str(ours)
    # As JAX's: no cause, the internal error that started the re-run hidden.
    assert ours.__cause__ is theirs.__cause__ is None
    assert ours.__suppress_context__ and theirs.__suppress_context__
    # JAX prints once more for each of its `jnp` functions (jitted) on the way.
    assert _DEOPTIMIZED in our_out and set(our_out) <= set(their_out)


def test_a_bad_value_made_in_a_backward_pass_names_the_primitive_as_jax(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def case(m: Any) -> Any:
        return m.grad(m.jit(lambda x: m.numpy.sqrt(x) * 0.0))(0.0)  # 0 * inf backwards

    theirs, their_out = _raised(jax, case, capsys)
    ours, our_out = _raised(lamina, case, capsys)
    assert type(ours) is type(theirs) is FloatingPointError
    assert str(ours) == str(theirs) == "invalid value (nan) encountered in mul"
    # JAX says "backward pass" here, and chains the forward line's stack as the cause (its
    # JaxStackTraceBeforeTransformation); Lamina prints its one message and chains nothing.
    assert their_out == [
        "Invalid nan value encountered in the backward pass of a jax.jit function. "
        "Calling the de-optimized backward pass."
    ]
    assert type(theirs.__cause__).__name__ == "JaxStackTraceBeforeTransformation"
    assert our_out == [_DEOPTIMIZED] and ours.__cause__ is None


def test_an_infinity_under_a_transformation_as_jax(capsys: pytest.CaptureFixture[str]) -> None:
    def case(m: Any) -> Any:
        return m.vmap(m.jit(lambda x: x / 0.0))(m.numpy.ones(3))

    errors = []
    for m in (jax, lamina):
        with m.debug_infs(True):
            try:
                case(m)
            except FloatingPointError as err:
                errors.append(str(err))
    capsys.readouterr()
    assert errors == ["invalid value (inf) encountered in div"] * 2


def test_nan_checks_turn_donation_off_as_jax(capsys: pytest.CaptureFixture[str]) -> None:
    def run(m: Any) -> tuple[str, bool]:
        x = m.numpy.array([-1.0, 1.0])
        with m.debug_nans(True):
            try:
                m.jit(m.numpy.log, donate_argnums=0)(x)
            except FloatingPointError as err:  # the re-run needs `x`: it was not donated
                return str(err), bool(x.is_deleted())
        raise AssertionError("no FloatingPointError")

    assert run(lamina) == run(jax) == ("invalid value (nan) encountered in log", False)
    capsys.readouterr()
    # Once the checks are off, the same function donates again.
    x = lamina.numpy.ones(2)
    lamina.jit(lamina.numpy.log, donate_argnums=0)(x)
    assert x.is_deleted()


def test_a_transformed_jit_without_bad_values_is_unchanged() -> None:
    with lamina.debug_nans(True):
        got = lamina.grad(lamina.jit(_where_sqrt(lamina)))(4.0)
    np.testing.assert_allclose(np.asarray(got), 0.25)
