"""The errors JAX users rely on, raised with JAX's classes and messages (issue 13, item 8)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest

import lamina


def _branchy(x: Any) -> Any:
    if x > 0:
        return x
    return -x


def _leak_then_use(api: Any, transform: str) -> Any:
    leaked: list[Any] = []

    def leak(x: Any) -> Any:
        leaked.append(x * 2)
        return x

    if transform == "jit":
        api.jit(leak)(1.0)
    else:
        api.grad(leak)(1.0)
    return api.numpy.sin(leaked[0])


CASES: list[tuple[str, Callable[[Any], Any]]] = [
    ("F7 bool under jit", lambda api: api.jit(_branchy)(1.0)),
    ("F8c int under jit", lambda api: api.jit(lambda x: int(x))(np.int32(1))),
    ("float under jit", lambda api: api.jit(lambda x: float(x))(1.0)),
    ("index under jit", lambda api: api.jit(lambda x: [0, 1][x])(np.int32(1))),
    ("asarray under jit", lambda api: api.jit(lambda x: np.asarray(x))(1.0)),
    ("bool under make_jaxpr", lambda api: api.make_jaxpr(_branchy)(np.float32(1))),
]


def _outcome(api: Any, call: Callable[[Any], Any]) -> tuple[str, str]:
    with pytest.raises(Exception) as info:
        call(api)
    return type(info.value).__name__, str(info.value)


@pytest.mark.parametrize(("name", "call"), CASES, ids=[c[0] for c in CASES])
def test_message_is_jax(name: str, call: Callable[[Any], Any]) -> None:
    assert _outcome(lamina, call) == _outcome(jax, call)


@pytest.mark.parametrize("transform", ["jit", "grad"])
def test_leaked_tracer_names_its_kind_as_jax(transform: str) -> None:
    ours = _outcome(lamina, lambda api: _leak_then_use(api, transform))
    theirs = _outcome(jax, lambda api: _leak_then_use(api, transform))
    assert ours[0] == theirs[0] == "UnexpectedTracerError"
    assert ours[1].splitlines()[:2] == theirs[1].splitlines()[:2]


def test_python_control_flow_works_under_grad_without_jit() -> None:
    assert float(lamina.grad(_branchy)(2.0)) == float(jax.grad(_branchy)(2.0)) == 1.0


def test_errors_module() -> None:
    assert issubclass(
        lamina.errors.TracerBoolConversionError, lamina.errors.ConcretizationTypeError
    )
    assert issubclass(lamina.errors.ConcretizationTypeError, TypeError)
