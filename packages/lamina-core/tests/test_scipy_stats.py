"""`lamina_core.scipy.stats` against `jax.scipy.stats`: printed jaxprs and values of every
distribution function, with points outside the support and bad parameters; gradients against
JAX and finite differences; vmap."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import lamina_core
import lamina_core.scipy
from lamina_core.testing import Oracle, check_ad, check_grads, check_vmap

pytestmark = pytest.mark.oracle

Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]


def stats_of(jnp: ModuleType) -> Any:
    if jnp is lamina_core.numpy:
        return lamina_core.scipy.stats
    import jax.scipy.stats

    return jax.scipy.stats


def program(dist: str, fn: str, *bound: Any) -> Program:
    def make(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        f = getattr(getattr(stats_of(jnp), dist), fn)
        return lambda *args: f(*args, *bound)

    return make


@contextlib.contextmanager
def x64() -> Iterator[None]:
    import jax

    with lamina_core.config(jax_enable_x64=True), jax.enable_x64(True):
        yield


X = np.array([-np.inf, -3.0, -1.0, -0.25, 0.0, 0.3, 0.5, 1.0, 2.5, 8.0, np.inf, np.nan], np.float32)
Q = np.array([-0.1, 0.0, 1e-4, 0.1, 0.5, 0.9, 1.0, 1.5, np.nan], np.float32)
K = np.array([-1.0, 0.0, 1.0, 2.0, 2.5, 3.0, 7.0, np.nan], np.float32)
LOC = np.float32(0.25)
SCALE = np.float32(1.5)

# (distribution, function, arguments after x, the x values)
CASES: list[tuple[str, str, tuple[Any, ...], np.ndarray]] = [
    *[("norm", f, (LOC, SCALE), X) for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")],
    ("norm", "ppf", (LOC, SCALE), Q),
    ("norm", "isf", (LOC, SCALE), Q),
    # Apart: JAX prints the `logaddexp` call_jaxpr two calls share once (a `let`), Lamina twice.
    ("logistic", "logpdf", (LOC, SCALE), X),
    *[("logistic", f, (LOC, SCALE), X[:-1]) for f in ("pdf", "cdf", "sf")],
    ("logistic", "ppf", (LOC, SCALE), Q),
    ("logistic", "isf", (LOC, SCALE), Q),
    *[("expon", f, (LOC, SCALE), X) for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")],
    ("expon", "ppf", (LOC, SCALE), Q),
    *[("uniform", f, (LOC, SCALE), X) for f in ("logpdf", "pdf", "cdf")],
    ("uniform", "ppf", (LOC, SCALE), Q),
    *[("laplace", f, (LOC, SCALE), X) for f in ("logpdf", "pdf", "cdf")],
    # XLA's float32 cdf at -inf is 0.5 - 0.5 rounded to ~6e-9, not 0: infinities left out.
    *[
        ("cauchy", f, (LOC, SCALE), X[1:-2])
        for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")
    ],
    ("cauchy", "ppf", (LOC, SCALE), Q),
    ("cauchy", "isf", (LOC, SCALE), Q),
    *[("t", f, (np.float32(3.0), LOC, SCALE), X) for f in ("logpdf", "pdf")],
    *[("gamma", f, (np.float32(2.5), LOC, SCALE), X) for f in ("logpdf", "pdf")],
    *[("beta", f, (np.float32(2.0), np.float32(3.5)), Q) for f in ("logpdf", "pdf")],
    ("beta", "logpdf", (np.float32(-1.0), np.float32(3.5)), Q),
    *[("chi2", f, (np.float32(3.0), LOC, SCALE), X) for f in ("logpdf", "pdf")],
    *[
        ("pareto", f, (np.float32(2.0), LOC, SCALE), X)
        for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")
    ],
    ("pareto", "ppf", (np.float32(2.0), LOC, SCALE), Q),
    *[("poisson", f, (np.float32(2.5),), K) for f in ("logpmf", "pmf")],
    *[("bernoulli", f, (np.float32(0.3),), K) for f in ("logpmf", "pmf", "cdf")],
    ("bernoulli", "ppf", (np.float32(0.3),), Q),
    ("bernoulli", "cdf", (np.float32(1.3),), K),
    *[("geom", f, (np.float32(0.3),), K) for f in ("logpmf", "pmf")],
    # At -inf (gumbel_r) and +inf (gumbel_l) the log density is -inf + inf: nan in IEEE
    # arithmetic and in the reference evaluator, inf after XLA's simplifications.
    *[
        (dist, f, (LOC, SCALE), X[1:-2])
        for dist in ("gumbel_r", "gumbel_l")
        for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")
    ],
    ("gumbel_r", "ppf", (LOC, SCALE), Q),
    ("gumbel_l", "ppf", (LOC, SCALE), Q),
    ("gumbel_r", "logpdf", (LOC, np.float32(-1.0)), X[1:-2]),
]
IDS = [f"{d}.{f}" for d, f, *_ in CASES]
# XLA's float32 lgamma, erfc and friends are a few ulps from the reference evaluator's values.
LOOSE = {"t", "gamma", "beta", "chi2", "poisson", "norm", "pareto", "gumbel_r", "gumbel_l"}


def check(oracle: Oracle, dist: str, prog: Program, *args: Any) -> None:
    import jax

    closed = oracle.check(prog, *args, numerics=False)
    got = oracle.evaluate(closed, list(args))
    want = jax.tree_util.tree_leaves(oracle.jit(prog(oracle.jnp, oracle.lax))(*args))
    tol = 2e-5 if dist in LOOSE else 2e-6
    for g, w in zip(got, want, strict=True):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tol, atol=tol)


def grouped(cases: list[tuple[str, str, tuple[Any, ...], np.ndarray]]) -> list[Any]:
    """The cases sharing a distribution, parameters and points, as one case of many functions
    (one program, one comparison: far fewer JAX compilations than one per function)."""
    groups: dict[tuple[Any, ...], tuple[str, list[str], tuple[Any, ...], np.ndarray]] = {}
    for dist, fn, params, x in cases:
        key = (dist, tuple(float(v) for v in params), x.tobytes())
        groups.setdefault(key, (dist, [], params, x))[1].append(fn)
    return [pytest.param(*g, id=f"{g[0]}.{'+'.join(g[1])}") for g in groups.values()]


def many(dist: str, fns: list[str]) -> Program:
    def make(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        module = getattr(stats_of(jnp), dist)
        return lambda *args: tuple(getattr(module, fn)(*args) for fn in fns)

    return make


@pytest.mark.parametrize(("dist", "fns", "params", "x"), grouped(CASES))
def test_values_and_jaxpr(oracle: Oracle, dist: str, fns: list[str], params: Any, x: Any) -> None:
    check(oracle, dist, many(dist, fns), x, *params)


@pytest.mark.slow
@pytest.mark.parametrize(("dist", "fn", "params", "x"), CASES, ids=IDS)
def test_each_function(oracle: Oracle, dist: str, fn: str, params: Any, x: Any) -> None:
    check(oracle, dist, program(dist, fn), x, *params)


@pytest.mark.parametrize(
    ("dist", "fns", "params", "x"),
    [
        pytest.param(*c.values, marks=[] if c.values[0] == "norm" else [pytest.mark.slow], id=c.id)
        for c in grouped(CASES)
    ],
)
def test_float64(oracle: Oracle, dist: str, fns: list[str], params: Any, x: Any) -> None:
    with x64():
        wide = tuple(np.float64(v) for v in params)
        check(oracle, dist, many(dist, fns), x.astype(np.float64), *wide)


def test_default_parameters_and_python_scalars(oracle: Oracle) -> None:
    check(oracle, "norm", program("norm", "logpdf"), X)
    check(oracle, "norm", program("norm", "cdf"), X)
    check(oracle, "norm", program("norm", "ppf"), Q)
    check(oracle, "expon", program("expon", "pdf", 0.5, 2.0), X)
    check(
        oracle, "poisson", program("poisson", "logpmf", 3.0), np.array([0.0, 1.0, 5.5], np.float32)
    )
    check(oracle, "t", program("t", "pdf", 2), np.array([0, 1, 5], np.int32))


def test_poisson_entropy(oracle: Oracle) -> None:
    mu = np.array([0.0, 0.5, 3.0, 9.9, 20.0, 150.0], np.float32)
    check(oracle, "poisson", program("poisson", "entropy", np.zeros((2, 1), np.float32)), mu)


def test_broadcast_parameters(oracle: Oracle) -> None:
    loc = np.array([[0.0], [1.0]], np.float32)
    scale = np.array([1.0, 2.0, 0.5], np.float32)
    check(oracle, "norm", program("norm", "logpdf"), np.float32(0.5), loc, scale)
    check(oracle, "t", program("t", "logpdf"), X[:3], np.float32(4.0), loc)


# (distribution, function, smooth point(s), parameters): differentiated in every argument.
SMOOTH = [
    ("norm", "logpdf", (0.3, 0.1, 1.5)),
    ("norm", "cdf", (0.3, 0.1, 1.5)),
    ("norm", "logcdf", (-4.0, 0.1, 1.5)),
    ("norm", "ppf", (0.3, 0.1, 1.5)),
    ("logistic", "logpdf", (0.3, 0.1, 1.5)),
    ("expon", "logpdf", (0.3, 0.1, 1.5)),
    ("laplace", "cdf", (0.3, 0.1, 1.5)),
    ("cauchy", "logpdf", (0.3, 0.1, 1.5)),
    ("t", "logpdf", (0.3, 3.0, 0.1, 1.5)),
    ("gamma", "logpdf", (2.0, 2.5, 0.1, 1.5)),
    ("beta", "logpdf", (0.4, 2.0, 3.5)),
    ("poisson", "logpmf", (3.0, 2.5)),
    ("bernoulli", "logpmf", (1.0, 0.3)),
    ("pareto", "logpdf", (3.0, 2.0, 0.1, 1.5)),
]


# Under grad, Lamina's partial evaluation of a jitted `where` keeps no literal-zero residual
# output where JAX's does, so the other gradients' jaxprs differ in that (values agree).
GRAD_PRINTED = {"norm.logpdf", "norm.cdf", "norm.logcdf", "logistic.logpdf", "laplace.cdf"}
GRAD_PRINTED |= {"cauchy.logpdf", "t.logpdf"}
DISCRETE = {"poisson", "bernoulli"}
GRAD_DEFAULT = {"norm.logpdf", "norm.logcdf", "gamma.logpdf", "t.logpdf", "bernoulli.logpmf"}


@pytest.mark.parametrize(
    ("dist", "fn", "args"),
    [
        pytest.param(*c, marks=[] if f"{c[0]}.{c[1]}" in GRAD_DEFAULT else [pytest.mark.slow])
        for c in SMOOTH
    ],
    ids=[f"{d}.{f}" for d, f, _ in SMOOTH],
)
def test_grad(oracle: Oracle, dist: str, fn: str, args: tuple[float, ...]) -> None:
    args32 = tuple(np.float32(a) for a in args)
    printed = f"{dist}.{fn}" in GRAD_PRINTED
    check_ad(oracle, program(dist, fn), *args32, kinds=("grad",), printed=printed, order=0)
    with x64():
        wide = tuple(np.float64(a) for a in args)
        if dist in DISCRETE:
            # Not differentiable in k (off the integers it leaves the support): only p or mu.
            f = getattr(getattr(lamina_core.scipy.stats, dist), fn)
            check_grads(lambda q: f(wide[0], q), wide[1:], order=1)
        else:
            check_ad(oracle, program(dist, fn), *wide, kinds=(), order=1)


@pytest.mark.parametrize(
    ("dist", "fn"),
    [
        ("gamma", "logpdf"),
        pytest.param("norm", "logcdf", marks=pytest.mark.slow),
        pytest.param("norm", "logpdf", marks=pytest.mark.slow),
        pytest.param("uniform", "cdf", marks=pytest.mark.slow),
    ],
)
def test_vmap(oracle: Oracle, dist: str, fn: str) -> None:
    x = np.array([[0.1, 0.5, 2.0], [0.3, 0.9, -1.0]], np.float32)
    params = np.array([[1.0, 2.0], [1.5, 0.5], [2.0, 1.0]], np.float32)
    if dist == "gamma":
        check_vmap(oracle, program(dist, fn), x, params[:, 0], in_axes=(1, 0))
    else:
        check_vmap(oracle, program(dist, fn), x, params[:, 0], params[:, 1], in_axes=(1, 0, 0))


def test_modules_match_jax() -> None:
    import jax.scipy.stats

    for dist in lamina_core.scipy.stats.__all__:
        ours = getattr(lamina_core.scipy.stats, dist)
        theirs = getattr(jax.scipy.stats, dist)
        names = [n for n, v in vars(ours).items() if getattr(v, "__module__", "") == ours.__name__]
        for name in names:
            if not name.startswith("_"):
                assert hasattr(theirs, name), f"{dist}.{name}"


COV = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], np.float32)
MEAN = np.array([1.0, 2.0, 3.0], np.float32)
POINTS = np.array([[0.5, 1.0, 2.0], [1.0, 2.0, 3.0], [-3.0, 0.0, 9.0]], np.float32)


def values_only(oracle: Oracle, prog: Program, *args: Any) -> None:
    import jax

    closed = lamina_core.make_jaxpr(prog(lamina_core.numpy, lamina_core.lax))(*args)
    got = oracle.evaluate(closed, list(args))
    want = jax.tree_util.tree_leaves(oracle.jit(prog(oracle.jnp, oracle.lax))(*args))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("fn", ["logpdf", "pdf"])
def test_multivariate_normal(oracle: Oracle, fn: str) -> None:
    prog = program("multivariate_normal", fn)
    # A scalar covariance, and one dimension: JAX's jaxprs.
    check(oracle, "norm", prog, POINTS, MEAN, np.float32(2.0))
    check(oracle, "norm", prog, POINTS[:, 0], MEAN[0], np.float32(2.0))
    # A covariance matrix: JAX's values (its `jnp.diagonal` stages a platform `cond`).
    values_only(oracle, prog, POINTS, MEAN, COV)


def test_multivariate_normal_grad_and_errors(oracle: Oracle) -> None:
    import jax

    ours: Any = lamina_core.scipy.stats.multivariate_normal.logpdf
    theirs: Any = jax.scipy.stats.multivariate_normal.logpdf
    got = lamina_core.grad(lambda *a: ours(*a).sum(), argnums=(0, 1, 2))(POINTS, MEAN, COV)
    want = jax.jit(jax.grad(lambda *a: theirs(*a).sum(), argnums=(0, 1, 2)))(POINTS, MEAN, COV)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-5)
    for bad in [(POINTS, MEAN, COV[:2, :2]), (POINTS, MEAN, np.ones(3, np.float32))]:
        with pytest.raises(ValueError, match="incompatible shapes"):
            ours(*bad)
    with pytest.raises(NotImplementedError):
        ours(POINTS, MEAN, COV, allow_singular=True)
