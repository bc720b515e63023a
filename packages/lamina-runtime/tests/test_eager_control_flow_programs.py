"""Eager control flow with a fresh body each call (a lambda in a function called repeatedly)
reuses the compiled program of an equal body, and never one of a different body."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lamina_runtime  # noqa: F401  (installs XLA eager execution)
from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_runtime.executable import Runtime


@pytest.fixture
def compilations(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    original = Runtime.compile

    def counting(self: Runtime, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Runtime, "compile", counting)
    return calls


def _run(scale: Any, xs: Any, init: Any = 0.0) -> Any:
    return lax.scan(lambda c, x: (c + x * scale, x), init, xs)


def test_an_equal_fresh_body_reuses_the_program(compilations: list[int]) -> None:
    xs = jnp.arange(4.0)
    first = _run(2.0, xs)
    seen = len(compilations)
    again = _run(2.0, xs)
    assert len(compilations) == seen
    np.testing.assert_allclose(again[0], first[0])


def test_a_different_body_gets_its_own_program(compilations: list[int]) -> None:
    xs = jnp.arange(4.0)
    np.testing.assert_allclose(_run(2.0, xs)[0], 12.0)
    seen = len(compilations)
    np.testing.assert_allclose(_run(3.0, xs)[0], 18.0)  # another scalar literal
    assert len(compilations) == seen + 1
    a, b = np.arange(4.0, dtype=np.float32), np.ones(4, np.float32)
    # Closed-over arrays of one type but different values: distinct programs, right numbers.
    np.testing.assert_allclose(_run(a, xs, jnp.zeros(4))[0], [0, 6, 12, 18])
    np.testing.assert_allclose(_run(b, xs, jnp.zeros(4))[0], [6, 6, 6, 6])
