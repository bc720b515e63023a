"""`lamina_core.scipy.stats.gaussian_kde` against `jax.scipy.stats.gaussian_kde`: bandwidths,
weights, densities, integrals and resampling (values, eagerly and traced: its jaxprs stage
the shared `jnp` functions, which print differently from JAX's), the pytree, gradients and
JAX's errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina_core
import lamina_core.scipy
from lamina_core import random as lr
from lamina_core.scipy.stats import gaussian_kde as LKDE
from lamina_core.testing import Oracle, sweep

pytestmark = pytest.mark.oracle
jax = pytest.importorskip("jax")
JKDE = jax.scipy.stats.gaussian_kde

_RS = np.random.RandomState(0)
D1 = _RS.randn(20).astype(np.float32)
D2 = _RS.randn(2, 15).astype(np.float32)
W = _RS.rand(15).astype(np.float32)
P2 = _RS.randn(2, 4).astype(np.float32)
EYE = np.eye(2, dtype=np.float32)
ZERO = np.zeros(2, np.float32)

Case = Callable[[Any, Any], Any]  # (kde class, jnp) -> the values

CASES: list[tuple[str, Case]] = [
    ("kde_scott_1d", lambda K, j: (K(D1).covariance, K(D1).inv_cov, K(D1).neff)),
    ("kde_silverman_weighted", lambda K, j: K(D2, "silverman", W).covariance),
    ("kde_scalar_bandwidth", lambda K, j: K(D2, bw_method=0.5).inv_cov),
    ("kde_callable_bandwidth", lambda K, j: K(D2, lambda k: k.neff**-0.3).covariance),
    ("kde_evaluate_1d", lambda K, j: K(D1).evaluate(D1[:5])),
    ("kde_call_2d", lambda K, j: K(D2)(P2)),
    ("kde_pdf_weighted", lambda K, j: K(D2, weights=W).pdf(P2)),
    ("kde_logpdf", lambda K, j: K(D2, "silverman", W).logpdf(P2)),
    ("kde_logpdf_one_point", lambda K, j: K(D2).logpdf(P2[:, 0])),
    ("kde_integrate_gaussian", lambda K, j: K(D2).integrate_gaussian(ZERO, EYE)),
    ("kde_integrate_box_1d", lambda K, j: K(D1).integrate_box_1d(-1.0, 0.5)),
    ("kde_integrate_kde", lambda K, j: K(D2).integrate_kde(K(P2))),
    ("kde_integrate_kde_swapped", lambda K, j: K(P2, weights=W[:4]).integrate_kde(K(D2))),
]


@pytest.mark.parametrize(("name", "case"), sweep(CASES, [c[0] for c in CASES], kind=lambda i: "k"))
def test_values_equal_jax(name: str, case: Case) -> None:
    want = jax.tree_util.tree_leaves(case(JKDE, jax.numpy))
    got = lamina_core.tree.tree_util.tree_leaves(case(LKDE, lamina_core.numpy))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-6)


@pytest.mark.slow
def test_traced_values_equal_jax(oracle: Oracle) -> None:
    def prog(K: Any) -> Callable[..., Any]:
        return lambda d, w, x: (K(d, weights=w).logpdf(x), K(d).integrate_kde(K(x)))

    closed = lamina_core.make_jaxpr(prog(LKDE))(D2, W, P2)
    got = oracle.evaluate(closed, [D2, W, P2])
    want = jax.jit(prog(JKDE))(D2, W, P2)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize(
    "shape", [(3,), *(pytest.param(s, marks=pytest.mark.slow) for s in [(), (2, 2)])]
)
def test_resample_equals_jax(shape: tuple[int, ...]) -> None:
    got = np.asarray(LKDE(D2, weights=W).resample(lr.key(4), shape))
    want = np.asarray(JKDE(D2, weights=W).resample(jax.random.key(4), shape))
    assert got.shape == want.shape == (2, *shape)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_is_a_pytree() -> None:
    kde = LKDE(D2, weights=W)
    leaves, tree = lamina_core.tree.tree_util.tree_flatten(kde)
    assert len(leaves) == 5
    back = lamina_core.tree.tree_util.tree_unflatten(tree, leaves)
    assert (back.d, back.n) == (2, 15)
    np.testing.assert_array_equal(np.asarray(back.inv_cov), np.asarray(kde.inv_cov))
    out = lamina_core.jit(lambda k, x: k.pdf(x))(kde, P2)
    np.testing.assert_allclose(np.asarray(out), np.asarray(JKDE(D2, weights=W).pdf(P2)), rtol=2e-5)


@pytest.mark.slow
def test_grad_equals_jax() -> None:
    def f(K: Any) -> Callable[..., Any]:
        return lambda d, x: K(d).logpdf(x).sum()

    got = lamina_core.grad(f(LKDE), argnums=(0, 1))(D2, P2)
    want = jax.grad(f(JKDE), argnums=(0, 1))(D2, P2)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-5)


def _raised(f: Callable[[], Any]) -> tuple[type[BaseException], str]:
    try:
        f()
    except Exception as e:  # the oracle's exception, whatever its type
        return type(e), str(e)
    raise AssertionError("no error")


ERRORS: list[tuple[str, Callable[[Any], Any]]] = [
    ("one_element", lambda K: K(np.ones(1, np.float32))),
    ("complex", lambda K: K(np.ones(3, np.complex64))),
    ("list", lambda K: K([1.0, 2.0])),
    ("bad_bandwidth", lambda K: K(D1, bw_method="wide")),
    ("weights_2d", lambda K: K(D2, weights=np.ones((3, 5), np.float32))),
    ("weights_length", lambda K: K(D2, weights=W[:3])),
    ("points_dimension", lambda K: K(D2).evaluate(np.ones((3, 2), np.float32))),
    ("box_2d", lambda K: K(D2).integrate_box_1d(0.0, 1.0)),
    ("box_vector_limits", lambda K: K(D1).integrate_box_1d(np.zeros(2), 1.0)),
    ("gaussian_mean", lambda K: K(D2).integrate_gaussian(np.zeros(3), EYE)),
    ("gaussian_cov", lambda K: K(D2).integrate_gaussian(ZERO, np.eye(3))),
    ("kde_dimensions", lambda K: K(D2).integrate_kde(K(D1))),
    ("integrate_box", lambda K: K(D2).integrate_box(ZERO, ZERO)),
    ("set_bandwidth", lambda K: K(D2).set_bandwidth("scott")),
]


@pytest.mark.parametrize(("name", "call"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_are_jax_errors(name: str, call: Callable[[Any], Any]) -> None:
    kind, message = _raised(lambda: call(JKDE))
    with pytest.raises(kind) as info:
        call(LKDE)
    assert str(info.value) == message
