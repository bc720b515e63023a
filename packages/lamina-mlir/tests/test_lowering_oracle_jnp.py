"""Lowering of `jnp` programs matches JAX's: nested jits, narrow floats, edge shapes, an MLP.

`jnp` functions that JAX stages as nested `jit`s (`where`, `clip`, `remainder`, ...) lower to
private functions and calls named as JAX names them. A hypothesis property generates small
elementwise programs and checks the text and the numbers of each against JAX.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import hypothesis.strategies as st
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings

import lamina_core
from lamina_core.testing import Oracle
from lamina_mlir import lower_jaxpr_to_module

Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]

pytestmark = pytest.mark.oracle

_rng = np.random.default_rng(1)
X = _rng.standard_normal((4, 3)).astype(np.float32)
W = _rng.standard_normal((3, 5)).astype(np.float32)
B = _rng.standard_normal(5).astype(np.float32)
N = _rng.integers(-9, 9, (4, 3)).astype(np.int32)


def mlp(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
    def net(params: Any, x: Any) -> Any:
        for w, b in params:
            x = jnp.tanh(jnp.dot(x, w) + b)
        return x

    return net


CASES: dict[str, tuple[Program, tuple[Any, ...]]] = {
    "where": (lambda jnp, lax: lambda x: jnp.where(x > 0, x, 0.0), (X,)),
    "clip": (lambda jnp, lax: lambda x: jnp.clip(x, -0.5, 0.5), (X,)),
    "remainder_floor_divide": (
        lambda jnp, lax: lambda x, n: (jnp.remainder(x, 2.0), jnp.floor_divide(n, 3)),
        (X, N),
    ),
    "round": (lambda jnp, lax: lambda x: jnp.round(x, 1), (X,)),
    "mean_var": (lambda jnp, lax: lambda x: (jnp.mean(x, 0), jnp.var(x), jnp.sum(x, 1)), (X,)),
    "argsort_max": (lambda jnp, lax: lambda x: (jnp.argmax(x, 1), jnp.sort(x, 0)), (X,)),
    "mixed_promotion": (lambda jnp, lax: lambda x, n: x * n + 1, (X, N)),
    "bf16": (
        lambda jnp, lax: lambda x: jnp.exp(x) * 2 + x.sum(),
        (X.astype(ml_dtypes.bfloat16),),
    ),
    "f16_reductions": (
        lambda jnp, lax: lambda x: (jnp.max(x), jnp.cumsum(x, 0)),
        (X.astype(np.float16),),
    ),
    "empty": (lambda jnp, lax: lambda x: (x + 1.0, jnp.sum(x)), (np.zeros((0, 3), np.float32),)),
    "scalar": (lambda jnp, lax: lambda x: jnp.sin(x) * 3.0, (np.float32(0.5),)),
    "mlp": (mlp, ([(W, B), (W.T @ W, B[:3])][:1], X)),
    "matmul_transpose": (lambda jnp, lax: lambda x, w: (x @ w).T.reshape(-1), (X, W)),
    "concat_stack": (
        lambda jnp, lax: lambda x: (jnp.concatenate([x, x], 0), jnp.stack([x, x], 1)),
        (X,),
    ),
}


def _lowered_texts(oracle: Oracle, program: Program, args: tuple[Any, ...]) -> tuple[Any, str]:
    ours = lamina_core.make_jaxpr(program(lamina_core.numpy, lamina_core.lax))(*args)
    fun = program(oracle.jnp, oracle.lax)
    assert str(ours) == str(oracle.jax.make_jaxpr(fun)(*args))
    name = getattr(fun, "__name__", "fun")
    lowered = lower_jaxpr_to_module(ours, module_name=f"jit({name})")
    return lowered, oracle.jax.jit(fun).lower(*args).as_text()


@pytest.mark.parametrize("case", sorted(CASES))
def test_jnp_program_lowers_as_jax_and_computes_its_numbers(
    case: str, oracle: Oracle, pjrt: Any
) -> None:
    program, args = CASES[case]
    lowered, want = _lowered_texts(oracle, program, args)
    text = lowered.as_text()
    assert text == want, f"\n--- lamina ---\n{text}\n--- jax ---\n{want}"
    fun = program(oracle.jnp, oracle.lax)
    expected = oracle.jax.tree_util.tree_leaves(oracle.jax.jit(fun)(*args))
    flat_args = oracle.jax.tree_util.tree_leaves(args)
    pjrt.assert_close(pjrt.run(lowered, *flat_args), [np.asarray(e) for e in expected])


_UNARY = ("sin", "cos", "tanh", "exp", "abs", "negative", "square", "floor")
_BINARY = ("add", "subtract", "multiply", "maximum", "minimum")


@st.composite
def elementwise_programs(draw: st.DrawFn) -> list[tuple[str, int, int]]:
    """Steps `(function, a, b)` over a growing list of values; `b` is unused by unary ones."""
    steps = []
    for i in range(draw(st.integers(1, 8))):
        name = draw(st.sampled_from(_UNARY + _BINARY))
        steps.append((name, draw(st.integers(0, i + 1)), draw(st.integers(0, i + 1))))
    return steps


def _program(steps: list[tuple[str, int, int]]) -> Program:
    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        def fun(x: Any, y: Any) -> Any:
            values = [x, y]
            for name, a, b in steps:
                f = getattr(jnp, name)
                args = (values[a],) if name in _UNARY else (values[a], values[b])
                values.append(f(*args))
            # Every value used: JAX's jit removes dead code and unused inputs before lowering.
            total = values[0]
            for v in values[1:]:
                total = total + v
            return total

        return fun

    return program


@settings(max_examples=25, deadline=None, derandomize=True)
@given(steps=elementwise_programs())
def test_generated_elementwise_programs_lower_as_jax(
    steps: list[tuple[str, int, int]], oracle: Oracle, pjrt: Any
) -> None:
    program = _program(steps)
    args = (X, X[0])
    lowered, want = _lowered_texts(oracle, program, args)
    assert lowered.as_text() == want
    expected = oracle.jax.jit(program(oracle.jnp, oracle.lax))(*args)
    pjrt.assert_close(pjrt.run(lowered, *args), [np.asarray(expected)])
