"""Autodiff machinery: the API, symbolic zeros, jit boundaries, errors; JAX as the oracle."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import lamina_core
from lamina_core.interpreters.jvp import defjvp
from lamina_core.testing import Oracle
from lamina_core.testing_ad import check_ad, check_grads

f32 = np.float32
pytestmark = pytest.mark.oracle

Case = tuple[str, Callable[[ModuleType, ModuleType], Callable[..., Any]], tuple[Any, ...]]


def arr(*shape: int, start: float = 0.5) -> np.ndarray:
    n = int(np.prod(shape)) if shape else 1
    return (np.arange(n, dtype=np.float64).reshape(shape) * 0.25 + start).astype(f32)


CASES: list[Case] = [
    ("sin times x", lambda jnp, lax: lambda x: jnp.sin(x) * x, (f32(1.5),)),
    ("tanh", lambda jnp, lax: jnp.tanh, (f32(0.3),)),
    ("two args", lambda jnp, lax: lambda x, y: x * y + y, (f32(1.5), f32(-2.0))),
    ("sum of squares", lambda jnp, lax: lambda x: jnp.sum(x**2), (arr(3),)),
    ("vector out", lambda jnp, lax: lambda x: jnp.sin(x) * 2.0 - x, (arr(4),)),
    ("cos exp log", lambda jnp, lax: lambda x: jnp.exp(jnp.cos(x)) + 1.0, (arr(2, 3),)),
    ("broadcast add", lambda jnp, lax: lambda x, y: jnp.sum(x + y), (arr(2, 3), arr(3))),
    ("jit inside", lambda jnp, lax: lambda x: jnp.sum(x * jnp.sin(x)), (arr(3),)),
]


@pytest.mark.parametrize(("name", "program", "args"), CASES, ids=[c[0] for c in CASES])
def test_autodiff_matches_jax(
    oracle: Oracle, name: str, program: Any, args: tuple[Any, ...]
) -> None:
    check_ad(oracle, program, *args)


def test_grad_of_int_input_is_an_error() -> None:
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
        lamina_core.grad(lambda x: x * 2)(np.int32(3))


def test_grad_of_vector_output_is_an_error() -> None:
    with pytest.raises(TypeError, match=r"Output had shape: \(3,\)"):
        lamina_core.grad(lambda x: x * 2.0)(np.ones(3, f32))


def test_check_grads_catches_a_wrong_rule() -> None:
    wrong_sin_p = lamina_core.Primitive("wrong_sin")
    lamina_core.abstract_eval_rules.set(wrong_sin_p, lambda x: x)
    lamina_core.impl_rules.set(wrong_sin_p, np.sin)
    defjvp(wrong_sin_p, lambda g, x: lamina_core.lax.mul(g, lamina_core.lax.cos(x)) * 2.0)
    check_grads(lamina_core.lax.sin, (arr(3),), order=2)
    with pytest.raises(AssertionError):
        check_grads(wrong_sin_p.bind, (arr(3),), order=1, modes=("fwd",))


def test_partial_eval_of_a_jit_splits_it_as_jax(oracle: Oracle) -> None:
    from jax._src.interpreters import partial_eval as pe

    from lamina_core.interpreters.partial_eval import partial_eval_jaxpr_nounits

    def program(jnp: ModuleType, lax: ModuleType, jit: Callable[..., Any]) -> Callable[..., Any]:
        def h(x: Any, y: Any) -> Any:
            return jnp.sin(x) * jnp.cos(y) + jnp.exp(x)

        inner = jit(h)
        return lambda x, y: inner(x, y)

    x = f32(1.0)
    theirs = oracle.jax.make_jaxpr(program(oracle.jnp, oracle.lax, oracle.jax.jit))(x, x)
    ours = lamina_core.make_jaxpr(program(lamina_core.numpy, lamina_core.lax, lamina_core.jit))(
        x, x
    )
    want = pe.partial_eval_jaxpr_nounits(theirs, [False, True], False)
    got = partial_eval_jaxpr_nounits(ours, [False, True], False)
    assert str(got[0]) == str(want[0])
    assert str(got[1]) == str(want[1])
    assert got[2] == want[2]
    assert [str(a) for a in got[3]] == [str(a) for a in want[3]]
