"""Properties of `vmap` over random programs and random axis specs: JAX's printed text and
values, and agreement with a per-example loop (`check_vmap`).

Programs are random straight-line compositions of elementwise ops and reductions over two
inputs; each input is mapped along a random axis (or not at all, or along a negative axis),
and outputs go to random `out_axes`.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lamina_core.testing import Oracle, check_vmap

pytestmark = pytest.mark.oracle

UNARY = ("sin", "tanh", "exp_small", "square", "neg", "sum_last", "max_first_keep")
BINARY = ("add", "sub", "mul", "maximum")
BATCH = 3
EXAMPLE_SHAPE = (2, 4)

Step = tuple[str, int, int]


def _program(steps: list[Step], two_outputs: bool) -> Callable[[ModuleType, ModuleType], Any]:
    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        def f(x: Any, y: Any) -> Any:
            values = [x, y]
            for op, i, j in steps:
                a, b = values[i % len(values)], values[j % len(values)]
                if op == "exp_small":
                    out = jnp.exp(jnp.tanh(a))
                elif op == "square":
                    out = a**2
                elif op == "neg":
                    out = -a
                elif op == "sum_last":
                    out = jnp.sum(a, axis=-1, keepdims=True) * a
                elif op == "max_first_keep":
                    out = a - jnp.max(a, axis=0, keepdims=True)
                elif op in UNARY:
                    out = getattr(jnp, op)(a)
                else:
                    name = {"sub": "subtract", "mul": "multiply"}.get(op, op)
                    out = getattr(jnp, name)(a, b)
                values.append(out)
            return (values[-1], values[-2]) if two_outputs else values[-1]

        return f

    return program


steps_strategy = st.lists(
    st.tuples(st.sampled_from(UNARY + BINARY), st.integers(0, 20), st.integers(0, 20)),
    min_size=1,
    max_size=5,
)
axis_strategy = st.sampled_from([0, 1, 2, -1, -3, None])
out_axis_strategy = st.sampled_from([0, 1, 2, -1])


def _batched(axis: int | None, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if axis is None:
        return rng.uniform(-1, 1, EXAMPLE_SHAPE).astype(np.float32)
    shape = list(EXAMPLE_SHAPE)
    shape.insert(axis if axis >= 0 else len(shape) + 1 + axis, BATCH)
    return rng.uniform(-1, 1, shape).astype(np.float32)


# 40 random programs, a few compiled oracle runs each (about 30 s): with the slow tests; the vmap
# corpora run every batching rule by default.
@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(
    steps=steps_strategy,
    x_axis=axis_strategy,
    y_axis=axis_strategy,
    out_axes=st.one_of(out_axis_strategy, st.tuples(out_axis_strategy, out_axis_strategy)),
)
def test_random_programs_and_axes_match_jax(
    oracle: Oracle, steps: list[Step], x_axis: Any, y_axis: Any, out_axes: Any
) -> None:
    if x_axis is None and y_axis is None:
        y_axis = 0
    x, y = _batched(x_axis, 0), _batched(y_axis, 1)
    two = isinstance(out_axes, tuple)
    check_vmap(oracle, _program(steps, two), x, y, in_axes=(x_axis, y_axis), out_axes=out_axes)
