"""`betabinom`, `binom`, `nbinom`, `multinomial`, `dirichlet`, `gennorm`, `vonmises` and
`wrapcauchy` of `lamina_core.scipy.stats` against `jax.scipy.stats`: printed jaxprs and values
(with points off the support and bad parameters), float64, gradients against JAX and finite
differences, vmap, and JAX's errors."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import lamina_core
import lamina_core.scipy
from lamina_core.testing import Oracle, check_ad, check_vmap, sweep

pytestmark = pytest.mark.oracle

Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]


def stats_of(jnp: ModuleType) -> Any:
    if jnp is lamina_core.numpy:
        return lamina_core.scipy.stats
    import jax.scipy.stats

    return jax.scipy.stats


def many(dist: str, fns: tuple[str, ...]) -> Program:
    def make(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        module = getattr(stats_of(jnp), dist)
        return lambda *args: tuple(getattr(module, fn)(*args) for fn in fns)

    return make


@contextlib.contextmanager
def x64() -> Iterator[None]:
    import jax

    with lamina_core.config(jax_enable_x64=True), jax.enable_x64(True):
        yield


def check(oracle: Oracle, prog: Program, *args: Any, printed: bool = True) -> None:
    import jax

    if printed:
        closed = oracle.check(prog, *args, numerics=False)
    else:
        closed = lamina_core.make_jaxpr(prog(lamina_core.numpy, lamina_core.lax))(*args)
    got = oracle.evaluate(closed, list(args))
    want = jax.tree_util.tree_leaves(oracle.jit(prog(oracle.jnp, oracle.lax))(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-5)


f32 = np.float32
# XLA's fused exp of a select of nan gives garbage (JAX's pdf at kappa = 0 or c = 0 under
# jit): the densities are compared at valid parameters, the log densities at all.
K = np.array([-1.0, 0.0, 1.0, 2.0, 2.5, 3.0, 7.0, 12.0, np.nan], f32)
X = np.array([-np.inf, -3.0, -0.5, 0.0, 0.3, 1.0, 2.5, 6.0, 7.0, np.inf, np.nan], f32)
KAPPA = np.array([0.0, 0.5, 2.0, 40.0, -1.0], f32)[:, None]
C = np.array([0.0, 0.3, 0.9, 1.0], f32)[:, None]
N_BAD = np.array([0.0, 4.0, -1.0], f32)[:, None]

# (distribution, functions, arguments)
CASES: list[tuple[str, tuple[str, ...], tuple[Any, ...]]] = [
    ("binom", ("logpmf", "pmf"), (K, f32(10.0), f32(0.3))),
    ("binom", ("logpmf", "pmf"), (K, f32(5.0), np.array([0.0, 1.0, 0.5], f32)[:, None], f32(1))),
    ("betabinom", ("logpmf", "pmf"), (K, f32(10.0), f32(2.0), f32(3.5))),
    ("betabinom", ("logpmf", "pmf"), (K, N_BAD, f32(0.5), f32(1.5), f32(1.0))),
    ("nbinom", ("logpmf", "pmf"), (K, f32(3.0), f32(0.4))),
    ("nbinom", ("logpmf", "pmf"), (K, f32(2.5), f32(0.7), f32(2.0))),
    ("vonmises", ("logpdf",), (X, KAPPA)),
    ("vonmises", ("pdf",), (X, KAPPA[1:4])),
    ("wrapcauchy", ("logpdf",), (X, C)),
    ("wrapcauchy", ("pdf",), (X, C[1:3])),
    ("gennorm", ("logpdf", "pdf"), (X, np.array([0.5, 1.0, 2.0, 8.0], f32)[:, None])),
    ("gennorm", ("cdf",), (X[:-1], np.array([0.5, 1.0, 2.0, 8.0], f32)[:, None])),
]  # fmt: skip
IDS = [f"{d}.{'+'.join(fns)}" for d, fns, _ in CASES]


@pytest.mark.parametrize(("dist", "fns", "args"), sweep(CASES, IDS))
def test_values_and_jaxpr(oracle: Oracle, dist: str, fns: tuple[str, ...], args: Any) -> None:
    check(oracle, many(dist, fns), *args)


@pytest.mark.slow
@pytest.mark.parametrize(("dist", "fns", "args"), CASES, ids=IDS)
def test_float64(oracle: Oracle, dist: str, fns: tuple[str, ...], args: Any) -> None:
    with x64():
        check(oracle, many(dist, fns), *(np.asarray(a, np.float64) for a in args))


def test_python_scalars_and_integers(oracle: Oracle) -> None:
    # Values only: the shared `xlogy` prints no bool casts of weakly typed operands where
    # JAX's does.
    check(oracle, many("binom", ("logpmf",)), np.arange(6), 5, 0.5, printed=False)
    check(oracle, many("nbinom", ("pmf",)), np.arange(4), 2, 0.5, printed=False)
    check(oracle, many("vonmises", ("logpdf",)), 1, 2)


ALPHA = np.array([1.5, 2.0, 0.5], f32)
SIMPLEX = np.array([[0.2, 0.5, 0.1], [0.3, 0.25, 0.2], [0.5, 0.25, 0.6]], f32)


def test_dirichlet(oracle: Oracle) -> None:
    prog = many("dirichlet", ("logpdf", "pdf"))
    check(oracle, prog, SIMPLEX, ALPHA)
    check(oracle, prog, SIMPLEX[:2], ALPHA)
    check(oracle, prog, SIMPLEX[:, 0], ALPHA)
    off = SIMPLEX.copy()
    off[0, 1] = -0.1
    check(oracle, prog, off, ALPHA)


def test_multinomial(oracle: Oracle) -> None:
    prog = many("multinomial", ("logpmf", "pmf"))
    p = np.array([0.2, 0.3, 0.5], f32)
    check(oracle, prog, np.array([1, 2, 3], np.int32), np.int32(6), p)
    check(oracle, prog, np.array([1, 2, 3], np.int32), np.int32(7), p)
    check(oracle, prog, np.array([0, 0, 4], np.int32), 4, np.array([0.5, 0.5, 0.0], f32))


def _raised(f: Callable[[], Any]) -> tuple[type[BaseException], str]:
    try:
        f()
    except Exception as e:  # the oracle's exception, whatever its type
        return type(e), str(e)
    raise AssertionError("no error")


ERRORS: list[tuple[str, Callable[[Any], Any]]] = [
    ("multinomial_float_counts", lambda s: s.multinomial.logpmf(np.ones(3, f32), 3, ALPHA)),
    ("dirichlet_alpha_2d", lambda s: s.dirichlet.logpdf(SIMPLEX, SIMPLEX)),
    ("dirichlet_x_entries", lambda s: s.dirichlet.logpdf(SIMPLEX[:1], ALPHA)),
    ("binom_list", lambda s: s.binom.logpmf([1.0], 3.0, 0.5)),
]


@pytest.mark.parametrize(("name", "call"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_are_jax_errors(name: str, call: Callable[[Any], Any]) -> None:
    import jax.scipy.stats

    kind, message = _raised(lambda: call(jax.scipy.stats))
    with pytest.raises(kind) as info:
        call(lamina_core.scipy.stats)
    assert str(info.value) == message


SMOOTH: list[tuple[str, str, tuple[float, ...]]] = [
    ("binom", "logpmf", (3.0, 10.0, 0.3)),
    ("betabinom", "logpmf", (3.5, 10.0, 2.0, 3.5)),  # floor(k): off the integers
    ("nbinom", "logpmf", (3.0, 2.5, 0.4)),
    ("vonmises", "logpdf", (0.7, 2.0)),
    ("wrapcauchy", "logpdf", (0.7, 0.4)),
    ("gennorm", "logpdf", (0.7, 1.5)),
]
# JAX's derivative of betaln in its first argument (algdiv's) is not the finite difference's
# (Lamina's equals JAX's): betabinom's n is left out of the finite differences.
FD_FIXED = {"betabinom": 1}


def _single(dist: str, fn: str, fixed: dict[int, Any]) -> Program:
    def make(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        f = getattr(getattr(stats_of(jnp), dist), fn)

        def call(*a: Any) -> Any:
            full = list(a)
            for i, v in sorted(fixed.items()):
                full.insert(i, v)
            return f(*full)

        return call

    return make


@pytest.mark.parametrize(
    ("dist", "fn", "args"), sweep(SMOOTH, [f"{d}.{f}" for d, f, _ in SMOOTH], kind=lambda i: "all")
)
def test_grad(oracle: Oracle, dist: str, fn: str, args: tuple[float, ...]) -> None:
    args32 = tuple(f32(a) for a in args)
    check_ad(oracle, _single(dist, fn, {}), *args32, kinds=("grad",), printed=False, order=0)
    with x64():
        wide = [np.float64(a) for a in args]
        fixed: dict[int, Any] = {}
        if dist in FD_FIXED:
            fixed = {FD_FIXED[dist]: wide.pop(FD_FIXED[dist])}
        check_ad(oracle, _single(dist, fn, fixed), *wide, kinds=(), order=1)


def test_vmap(oracle: Oracle) -> None:
    def prog(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        return lambda k, n, p: stats_of(jnp).binom.logpmf(k, n, p)

    k = np.array([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], f32)
    check_vmap(oracle, prog, k, np.array([5.0, 6.0, 7.0], f32), f32(0.4), in_axes=(1, 0, None))
