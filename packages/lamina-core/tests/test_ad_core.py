"""Autodiff machinery: the API, symbolic zeros, jit boundaries, errors; JAX as the oracle."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import lamina_core
from lamina_core.interpreters.jvp import defjvp
from lamina_core.testing import Oracle, check_ad, check_grads
from lamina_core.trace._evaluate import reference_impl
from lamina_core.trace._tracing import install_eager_impl

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
    # The test primitive has no lowering: evaluate with the NumPy reference even when a runtime
    # has installed XLA execution in this process.
    previous = install_eager_impl(reference_impl)
    try:
        with pytest.raises(AssertionError):
            check_grads(wrong_sin_p.bind, (arr(3),), order=1, modes=("fwd",))
    finally:
        install_eager_impl(previous)


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


def _f(jnp: ModuleType) -> Callable[..., Any]:
    return lambda x: jnp.sin(x) * jnp.tanh(x) * x


Composition = Callable[[Any, ModuleType], Callable[..., Any]]

COMPOSITIONS: list[tuple[str, Composition, int]] = [
    ("grad grad", lambda api, jnp: api.grad(api.grad(_f(jnp))), 1),
    ("grad grad grad", lambda api, jnp: api.grad(api.grad(api.grad(_f(jnp)))), 1),
    (
        "jvp of grad",
        lambda api, jnp: lambda x, t: api.jvp(api.grad(_f(jnp)), (x,), (t,)),
        2,
    ),
    (
        "grad of jvp",
        lambda api, jnp: api.grad(lambda x: api.jvp(_f(jnp), (x,), (x,))[1]),
        1,
    ),
    (
        "jvp of vjp",
        lambda api, jnp: lambda x, t: api.jvp(lambda x: api.vjp(_f(jnp), x)[1](x), (x,), (t,)),
        2,
    ),
    ("grad grad jit", lambda api, jnp: api.grad(api.grad(api.jit(_f(jnp)))), 1),
    ("jit grad grad", lambda api, jnp: api.jit(api.grad(api.grad(_f(jnp)))), 1),
    ("jvp jit", lambda api, jnp: lambda x, t: api.jvp(api.jit(_f(jnp)), (x,), (t,)), 2),
    (
        "grad of jvp of jit",
        lambda api, jnp: api.grad(lambda x: api.jvp(api.jit(_f(jnp)), (x,), (x,))[1]),
        1,
    ),
]


@pytest.mark.parametrize(("name", "make", "n_args"), COMPOSITIONS, ids=[c[0] for c in COMPOSITIONS])
def test_compositions_print_and_compute_as_jax(
    oracle: Oracle, name: str, make: Composition, n_args: int
) -> None:
    args = (f32(0.7), f32(1.3))[:n_args]
    ours_f = make(lamina_core, lamina_core.numpy)
    theirs_f = make(oracle.jax, oracle.jnp)
    ours = lamina_core.make_jaxpr(ours_f)(*args)
    theirs = oracle.jax.make_jaxpr(theirs_f)(*args)
    assert str(ours) == str(theirs)
    got = lamina_core.tree.tree_util.tree_leaves(ours_f(*args))
    want = oracle.jax.tree_util.tree_leaves(oracle.jit(theirs_f)(*args))
    np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want), rtol=1e-5)


def test_python_control_flow_on_a_differentiated_value_uses_the_primal() -> None:
    def relu(x: Any) -> Any:
        return x if x > 0 else 0.0 * x

    assert float(lamina_core.grad(relu)(2.0)) == 1.0
    assert float(lamina_core.grad(relu)(-2.0)) == 0.0
    assert float(lamina_core.jvp(relu, (3.0,), (2.0,))[1]) == 2.0


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float8_e4m3fn"])
def test_grad_accepts_ml_dtypes_floats_as_jax(dtype: str) -> None:
    # ml_dtypes' floats have NumPy kind "V": the input and output checks must ask the dtype
    # lattice, not the kind letter.
    import ml_dtypes

    jax = pytest.importorskip("jax")
    x = np.array(1.5, getattr(ml_dtypes, dtype, dtype))

    def f(np_: Any) -> Callable[[Any], Any]:
        return lambda x: np_.sin(x) * x

    ours, theirs = f(lamina_core.numpy), f(jax.numpy)
    assert str(lamina_core.make_jaxpr(lamina_core.grad(ours))(x)) == str(
        jax.make_jaxpr(jax.grad(theirs))(x)
    )
    for mine, want in [
        (lamina_core.grad(ours)(x), jax.grad(theirs)(x)),
        (lamina_core.jacfwd(ours)(x), jax.jacfwd(theirs)(x)),
    ]:
        assert np.asarray(mine).dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(np.asarray(mine), np.asarray(want))
    with pytest.raises(TypeError, match="requires real-valued outputs"):
        lamina_core.grad(lambda x: x.astype(np.int32))(x)
