"""`lamina.scipy` run on XLA (jitted and eager) against `jax.scipy`'s numbers and gradients,
and reachable as `jax.scipy` is: `import lamina.scipy.special`, `lamina.scipy.stats.norm`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina
import lamina.scipy.linalg
import lamina.scipy.special
import lamina.scipy.stats.norm

jax = pytest.importorskip("jax")
for _module in ("jax.scipy.linalg", "jax.scipy.special", "jax.scipy.stats"):
    pytest.importorskip(_module)

X = np.array([0.05, 0.3, 0.5, 0.9, 1.7, 4.0], np.float32)
Y = np.array([0.2, 1.5, 0.5, 2.0, 3.0, 0.7], np.float32)

CASES: list[tuple[str, Callable[[Any], Callable[..., Any]], tuple[Any, ...]]] = [
    ("xlogy", lambda s: s.special.xlogy, (X, Y)),
    ("entr", lambda s: s.special.entr, (X,)),
    ("gammaln", lambda s: s.special.gammaln, (X,)),
    ("i0", lambda s: s.special.i0, (X,)),
    ("i1e", lambda s: s.special.i1e, (X,)),
    ("betaln", lambda s: s.special.betaln, (X, Y * 5)),
    ("erfinv", lambda s: lambda x: s.special.erfinv(x / 5), (X,)),
    ("ndtri", lambda s: lambda x: s.special.ndtri(x / 5), (X,)),
    ("log_ndtr", lambda s: lambda x: s.special.log_ndtr(-4 * x), (X,)),
    ("logsumexp", lambda s: lambda x, b: s.special.logsumexp(x, b=b), (X, Y)),
    ("norm.logpdf", lambda s: s.stats.norm.logpdf, (X, Y)),
    ("t.logpdf", lambda s: lambda x: s.stats.t.logpdf(x, 3.0), (X,)),
    ("gamma.logpdf", lambda s: lambda x: s.stats.gamma.logpdf(x, 2.5), (X,)),
    ("beta.logpdf", lambda s: lambda x: s.stats.beta.logpdf(x / 5, 2.0, 3.0), (X,)),
]


DEFAULT = {"xlogy", "log_ndtr", "beta.logpdf"}


@pytest.mark.parametrize(
    "case",
    [pytest.param(c, marks=[] if c[0] in DEFAULT else [pytest.mark.slow]) for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_values_and_grads_on_xla(case: Any) -> None:
    _, call, args = case
    ours, theirs = call(lamina.scipy), call(jax.scipy)
    want = np.asarray(theirs(*args))
    np.testing.assert_allclose(np.asarray(lamina.jit(ours)(*args)), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(ours(*args)), want, rtol=1e-5, atol=1e-6)
    grad_ours = lamina.jit(lamina.grad(lambda *a: ours(*a).sum()))
    grad_theirs = jax.grad(lambda *a: theirs(*a).sum())
    np.testing.assert_allclose(
        np.asarray(grad_ours(*args)), np.asarray(grad_theirs(*args)), rtol=1e-5, atol=1e-6
    )


def test_linalg_on_xla() -> None:
    a, b = np.ones((2, 2), np.float32), np.arange(3, dtype=np.float32)
    got = lamina.jit(lamina.scipy.linalg.block_diag)(a, b)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(jax.scipy.linalg.block_diag(a, b)))
    spd = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], np.float32)

    def solve(la: Any) -> Any:
        return lambda m, v: la.cho_solve(la.cho_factor(m, lower=True), v)

    want = np.asarray(solve(jax.scipy.linalg)(spd, b))
    np.testing.assert_allclose(
        np.asarray(lamina.jit(solve(lamina.scipy.linalg))(spd, b)), want, rtol=1e-5
    )
    want_lp = np.asarray(jax.scipy.stats.multivariate_normal.logpdf(b, b * 0, spd))
    got_lp = lamina.jit(lamina.scipy.stats.multivariate_normal.logpdf)(b, b * 0, spd)
    np.testing.assert_allclose(np.asarray(got_lp), want_lp, rtol=1e-5)


def test_namespaces() -> None:
    assert lamina.scipy.stats.norm is lamina.scipy.stats.norm
    assert set(lamina.scipy.__all__) == {
        "cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "optimize", "signal",
        "sparse", "special", "stats",
    }  # fmt: skip
    for name in lamina.scipy.special.__all__:
        assert hasattr(jax.scipy.special, name), name
    for dist in lamina.scipy.stats.__all__:
        assert hasattr(jax.scipy.stats, dist), dist
