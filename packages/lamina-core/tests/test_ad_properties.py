"""Properties of differentiation over random programs: JAX's text and values, and the
transpose identity `<ct, J t> == <J^T ct, t>`.

Programs are random straight-line compositions of unary and binary ops over two inputs (each
op may reuse any earlier value, so fan-out and symbolic zeros both occur).
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lamina_core.testing import Oracle, check_ad

pytestmark = pytest.mark.oracle

UNARY = ("sin", "cos", "tanh", "exp_small", "square", "neg")
BINARY = ("add", "sub", "mul")

Step = tuple[str, int, int]


def _program(steps: list[Step], reduce: bool) -> Callable[[ModuleType, ModuleType], Any]:
    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        def f(x: Any, y: Any) -> Any:
            values = [x, y]
            for op, i, j in steps:
                a, b = values[i % len(values)], values[j % len(values)]
                if op == "exp_small":
                    out = jnp.exp(jnp.tanh(a))
                elif op == "square":
                    out = a**2
                elif op in UNARY:
                    out = getattr(jnp, {"neg": "negative"}.get(op, op))(a)
                else:
                    out = getattr(jnp, {"sub": "subtract", "mul": "multiply"}.get(op, op))(a, b)
                values.append(out)
            last = values[-1]
            return jnp.sum(last) if reduce else last

        return f

    return program


steps_strategy = st.lists(
    st.tuples(st.sampled_from(UNARY + BINARY), st.integers(0, 20), st.integers(0, 20)),
    min_size=1,
    max_size=6,
)


def _check_random_program(oracle: Oracle, steps: list[Step], reduce: bool) -> None:
    x = np.linspace(-0.8, 0.9, 3, dtype=np.float32)
    y = np.linspace(0.3, -0.5, 3, dtype=np.float32)
    check_ad(oracle, _program(steps, reduce), x, y, order=1)


# 8 random programs by default (the elementwise AD corpus runs every rule by default); the
# 40-program run (about 30 s) goes with the slow tests.
@settings(max_examples=8, deadline=None)
@given(steps=steps_strategy, reduce=st.booleans())
def test_random_programs_differentiate_as_jax(
    oracle: Oracle, steps: list[Step], reduce: bool
) -> None:
    _check_random_program(oracle, steps, reduce)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(steps=steps_strategy, reduce=st.booleans())
def test_forty_random_programs_differentiate_as_jax(
    oracle: Oracle, steps: list[Step], reduce: bool
) -> None:
    _check_random_program(oracle, steps, reduce)
