"""`lamina_core.nn` against `jax.nn`: printed jaxprs, values and gradients; JAX as the oracle."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import lamina_core
import lamina_core.nn
from lamina_core.nn import _normalization
from lamina_core.testing import Oracle, sweep

pytestmark = pytest.mark.oracle

Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]

X = np.array([-7.0, -2.0, -1.0, 0.0, 0.5, 1.0, 3.0, 6.0, 7.0, np.inf, -np.inf], np.float32)
X_FINITE = X[:-2]
M = np.array([[1.0, 2.0, -np.inf, 0.5], [0.0, 0.5, 1.0, -3.0], [4.0, -1.0, 2.0, 2.0]], np.float32)
MASK = np.array([[True, False, True, True], [True, True, False, False], [False, True, True, True]])


def _modules(jnp: ModuleType) -> tuple[ModuleType, Any]:
    """(nn, grad) of the library whose `numpy` the oracle passed."""
    if jnp is lamina_core.numpy:
        return lamina_core.nn, lamina_core.grad
    import jax

    return jax.nn, jax.grad


def nn_program(call: Callable[[ModuleType], Callable[..., Any]]) -> Program:
    return lambda jnp, lax: call(_modules(jnp)[0])


def grad_program(call: Callable[[ModuleType], Callable[..., Any]], argnums: int = 0) -> Program:
    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        nn, grad = _modules(jnp)
        f = call(nn)
        differentiated: Callable[..., Any] = grad(lambda *a: f(*a).sum(), argnums=argnums)
        return differentiated

    return program


ELEMENTWISE = [
    "celu",
    "elu",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "identity",
    "leaky_relu",
    "log_sigmoid",
    "mish",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "silu",
    "swish",
    "soft_sign",
    "softplus",
    "sparse_plus",
    "sparse_sigmoid",
    "squareplus",
    "tanh",
    "gelu",
]


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_elementwise_jaxpr_and_values(oracle: Oracle, name: str) -> None:
    oracle.check(nn_program(lambda nn: getattr(nn, name)), X)


# identity's gradient differs only in how Lamina's jit forwards an output that is an input.
@pytest.mark.parametrize("name", [n for n in ELEMENTWISE if n != "identity"])
def test_elementwise_grad(oracle: Oracle, name: str) -> None:
    # Kinks included: relu/relu6's custom rules give 0 at 0 and 6.
    oracle.check(grad_program(lambda nn: getattr(nn, name)), X_FINITE)


def test_relu_custom_jvp_at_zero() -> None:
    g = lamina_core.grad(lambda x: lamina_core.nn.relu(x))(np.float32(0.0))
    assert float(np.asarray(g)) == 0.0
    g6 = lamina_core.grad(lambda x: lamina_core.nn.relu6(x))(np.float32(6.0))
    assert float(np.asarray(g6)) == 0.0


@pytest.mark.parametrize(
    "call",
    [
        lambda nn: lambda x: nn.elu(x, 0.5),
        lambda nn: lambda x: nn.celu(x, alpha=2.0),
        lambda nn: lambda x: nn.leaky_relu(x, negative_slope=0.2),
        lambda nn: lambda x: nn.squareplus(x, 1.0),
        lambda nn: lambda x: nn.gelu(x, approximate=True),
        lambda nn: lambda x: nn.log1mexp(x),
    ],
)
def test_parameterized_activations(oracle: Oracle, call: Callable[[ModuleType], Any]) -> None:
    x = np.abs(X_FINITE) + np.float32(0.25)
    oracle.check(nn_program(call), x)
    oracle.check(grad_program(call), x)


def test_elementwise_other_dtypes(oracle: Oracle) -> None:
    oracle.check(nn_program(lambda nn: nn.relu), np.array([-1, 0, 2], np.int32))
    oracle.check(nn_program(lambda nn: nn.gelu), np.array([-1, 0, 2], np.int32))
    oracle.check(nn_program(lambda nn: nn.silu), np.float32(0.5))


REDUCTIONS: list[tuple[str, Callable[[ModuleType], Any], tuple[Any, ...]]] = [
    ("softmax", lambda nn: nn.softmax, (M,)),
    ("softmax_axis0", lambda nn: lambda x: nn.softmax(x, axis=0), (M,)),
    ("softmax_axes", lambda nn: lambda x: nn.softmax(x, axis=(0, 1)), (M,)),
    ("softmax_where", lambda nn: lambda x, w: nn.softmax(x, axis=1, where=w), (M, MASK)),
    ("log_softmax", lambda nn: nn.log_softmax, (M,)),
    ("log_softmax_axes", lambda nn: lambda x: nn.log_softmax(x, axis=(0, 1)), (M,)),
    ("log_softmax_where", lambda nn: lambda x, w: nn.log_softmax(x, where=w), (M, MASK)),
    ("logsumexp", lambda nn: nn.logsumexp, (M,)),
    ("logsumexp_axis", lambda nn: lambda x: nn.logsumexp(x, axis=1, keepdims=True), (M,)),
    ("logsumexp_where", lambda nn: lambda x, w: nn.logsumexp(x, axis=0, where=w), (M, MASK)),
    ("logsumexp_b", lambda nn: lambda x, b: nn.logsumexp(x, axis=1, b=b), (M, M + 1)),
    ("logmeanexp", lambda nn: lambda x: nn.logmeanexp(x, axis=1), (M,)),
    ("logmeanexp_where", lambda nn: lambda x, w: nn.logmeanexp(x, where=w), (M, MASK)),
    ("standardize", lambda nn: nn.standardize, (M[1:],)),
    (
        "standardize_stable",
        lambda nn: lambda x, w: nn.standardize(x, axis=(0, 1), where=w, algorithm="stable"),
        (M[1:], MASK[1:]),
    ),
    ("standardize_given", lambda nn: lambda x, m: nn.standardize(x, 0, m, 2.0), (M[1:], M[2])),
    ("glu", lambda nn: nn.glu, (M,)),
    ("glu_axis", lambda nn: lambda x: nn.glu(x, axis=0), (M[1:],)),
]


# The first case of each function by default, the rest with the slow tests.
@pytest.mark.parametrize("case", sweep(REDUCTIONS, [c[0] for c in REDUCTIONS], unpack=False))
def test_reductions_jaxpr_and_values(oracle: Oracle, case: Any) -> None:
    _, call, args = case
    oracle.check(nn_program(call), *args)


# The last case of each function (its `where`, `b`, given-mean or axis variant) by default.
@pytest.mark.parametrize(
    "case", sweep(REDUCTIONS[::-1], [c[0] for c in REDUCTIONS[::-1]], unpack=False)
)
def test_reductions_grad(oracle: Oracle, case: Any) -> None:
    _, call, args = case
    finite = tuple(
        np.where(np.isinf(a), np.float32(-5.0), a) if a.dtype != bool else a for a in args
    )
    oracle.check(grad_program(call), *finite)


def test_softmax_custom_jvp_setting(oracle: Oracle) -> None:
    import jax

    x = M[1:]
    ours = lamina_core.make_jaxpr(
        lamina_core.grad(lambda v: (_normalization.softmax_custom_jvp(v) * v).sum())
    )(x)
    with jax.softmax_custom_jvp(True):
        theirs = jax.make_jaxpr(jax.grad(lambda v: (jax.nn.softmax(v) * v).sum()))(x)
        want = jax.grad(lambda v: (jax.nn.softmax(v) * v).sum())(x)
    assert str(ours) == str(theirs)
    got = lamina_core.grad(lambda v: (_normalization.softmax_custom_jvp(v) * v).sum())(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


@pytest.mark.parametrize(
    ("call", "arg"),
    [
        (lambda nn: lambda x: nn.one_hot(x, 4), np.array([0, 2, 3, 5, -1], np.int32)),
        (lambda nn: lambda x: nn.one_hot(x, 3, axis=0), np.array([[0, 2], [1, 1]], np.int32)),
        (
            lambda nn: lambda x: nn.one_hot(x, 3, dtype=np.int32, axis=1),
            np.array([[0, 2]], np.int8),
        ),
    ],
)
def test_one_hot(oracle: Oracle, call: Callable[[ModuleType], Any], arg: np.ndarray) -> None:
    oracle.check(nn_program(call), arg)


def test_one_hot_float_input_warns() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lamina_core.nn.one_hot(np.array([1.0], np.float32), 2)
    assert any("should be integer-typed" in str(w.message) for w in caught)


BAD_CALLS: list[tuple[str, Callable[[Any], Any]]] = [
    ("silu_str", lambda nn: nn.silu("a")),
    ("softmax_axis", lambda nn: nn.softmax(M, axis=2)),
    ("glu_odd", lambda nn: nn.glu(M[:, :3])),
    ("standardize_algorithm", lambda nn: nn.standardize(M, algorithm="slow")),
    ("one_hot_axis", lambda nn: nn.one_hot(np.array([1], np.int32), 3, axis=3)),
]


@pytest.mark.parametrize("case", BAD_CALLS, ids=[c[0] for c in BAD_CALLS])
def test_errors_match_jax(case: tuple[str, Callable[[Any], Any]]) -> None:
    import jax

    bad_call = case[1]
    with pytest.raises(Exception) as want:
        bad_call(jax.nn)
    with pytest.raises(type(want.value)):
        bad_call(lamina_core.nn)


def test_public_names_match_jax() -> None:
    import jax

    theirs = {n for n in dir(jax.nn) if not n.startswith("_")}
    ours = set(lamina_core.nn.__all__)
    assert ours == theirs


def test_gelu_exact_jaxpr(oracle: Oracle) -> None:
    oracle.check(nn_program(lambda nn: lambda x: nn.gelu(x, approximate=False)), X)


def test_gelu_exact_values(oracle: Oracle) -> None:
    import jax

    for x in (X, X_FINITE.astype(np.float16)):
        got = lamina_core.nn.gelu(x, approximate=False)
        want = jax.nn.gelu(x, approximate=False)
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-3)
    grad_ours = lamina_core.grad(lambda v: lamina_core.nn.gelu(v, approximate=False).sum())
    grad_jax = jax.grad(lambda v: jax.nn.gelu(v, approximate=False).sum())
    np.testing.assert_allclose(
        np.asarray(grad_ours(X_FINITE)), np.asarray(grad_jax(X_FINITE)), rtol=1e-5
    )


def test_identity_grad_jaxpr(oracle: Oracle) -> None:
    oracle.check(grad_program(lambda nn: nn.identity), X_FINITE)
