"""`lamina_core.scipy.special`'s incomplete gamma and beta functions (`gammainc`, `gammaincc`,
`betainc`) and Faddeeva family (`erfcx`, `dawsn`, `wofz`) against `jax.scipy.special`: printed
jaxprs, values (float32 and float64, with 0, inf and nan; complex for `wofz` and `erfcx`),
JAX's errors, derivatives (custom JVPs) against JAX and finite differences, and vmap."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import lamina_core
import lamina_core.scipy
from lamina_core.testing import Oracle, check_ad, check_vmap

pytestmark = pytest.mark.oracle

Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]


def special_of(jnp: ModuleType) -> Any:
    if jnp is lamina_core.numpy:
        return lamina_core.scipy.special
    import jax.scipy.special

    return jax.scipy.special


def program(name: str) -> Program:
    def make(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        fn: Callable[..., Any] = getattr(special_of(jnp), name)
        return fn

    return make


@contextlib.contextmanager
def x64() -> Iterator[None]:
    import jax

    with lamina_core.config(jax_enable_x64=True), jax.enable_x64(True):
        yield


def check(oracle: Oracle, name: str, *args: Any, rtol: float = 2e-6) -> None:
    """JAX's printed jaxpr, and JAX's jitted values from Lamina's evaluator."""
    import jax

    prog = program(name)
    closed = oracle.check(prog, *args, numerics=False)
    got = oracle.evaluate(closed, list(args))
    want = jax.tree_util.tree_leaves(oracle.jit(prog(oracle.jnp, oracle.lax))(*args))
    for g, w in zip(got, want, strict=True):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=rtol * 1e-3)


EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan]
REALS = [-40.0, -9.5, -5.0, -3.3, -1.0, -0.25, 0.5, 2.0, 3.25, 4.0, 6.25, 9.0, 12.0, 30.0, *EDGES]
A = np.array([0.0, 0.5, 1.0, 2.0, 3.0, 7.5, 0.1, 40.0, -1.0, np.nan, 2.0, 1.0], np.float32)
X = np.array([0.0, 0.3, 2.0, 1.5, 3.0, 12.0, 0.01, 38.0, 1.0, 1.0, np.inf, np.nan], np.float32)
U = np.array([0.0, 0.1, 0.5, 0.9, 1.0, 0.3, 0.99, 0.5, 0.2, 1.5, np.nan, 0.7], np.float32)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma(oracle: Oracle, name: str) -> None:
    # XLA's float32 loops lose ulps near a = x (Lamina's references sum in float64).
    check(oracle, name, A, X, rtol=1e-5)
    check(oracle, name, np.int32(2), X, rtol=1e-5)  # an integer a: promoted, weakly if a Python int
    oracle.check(lambda jnp, lax: lambda x: getattr(special_of(jnp), name)(2, x), X)
    with x64():
        check(oracle, name, A.astype(np.float64)[:, None], X.astype(np.float64), rtol=1e-12)


@pytest.mark.slow
def test_betainc(oracle: Oracle) -> None:
    check(oracle, "betainc", A, X, U, rtol=1e-4)
    check(oracle, "betainc", np.int32(2), X[:4], U[:4], rtol=1e-5)
    with x64():
        check(
            oracle,
            "betainc",
            A.astype(np.float64),
            X.astype(np.float64),
            U.astype(np.float64),
            rtol=1e-10,
        )


@pytest.mark.parametrize("name", ["erfcx", "dawsn"])
def test_real_faddeeva(oracle: Oracle, name: str) -> None:
    x = np.array(REALS, np.float32)
    check(oracle, name, x)
    check(oracle, name, x.astype(np.float16), rtol=1e-3)
    check(oracle, name, np.array([0, 1, 3], np.int32))
    with x64():
        check(oracle, name, x.astype(np.float64), rtol=1e-13)


def _complex_grid(dtype: Any) -> np.ndarray:
    re = np.array([-30.0, -6.0, -2.0, -0.5, 0.0, 0.7, 3.0, 8.0, 25.0])
    return (re[:, None] + 1j * re[None, ::2]).ravel().astype(dtype)


@pytest.mark.parametrize("name", ["wofz", "erfcx"])
def test_complex_faddeeva(oracle: Oracle, name: str) -> None:
    check(oracle, name, _complex_grid(np.complex64), rtol=1e-5)
    with x64():
        check(oracle, name, _complex_grid(np.complex128), rtol=1e-13)
    if name == "wofz":  # real and integer operands are promoted to complex
        check(oracle, name, np.array(REALS[:-5], np.float32), rtol=1e-5)
        check(oracle, name, np.array([0, 1, 3], np.int32), rtol=1e-5)


def test_errors_are_jaxs() -> None:
    import jax.scipy.special as js

    for name, args in (("dawsn", (1j,)), ("betainc", (1.0, 2.0, 0.5j))):
        with pytest.raises(ValueError) as want:
            getattr(js, name)(*args)
        with pytest.raises(ValueError) as got:
            getattr(lamina_core.scipy.special, name)(*args)
        assert str(got.value) == str(want.value)


# Derivatives: the custom JVPs (erfcx, dawsn, wofz) and lax's rules (gammainc, betainc in x).


@pytest.mark.parametrize("name", ["erfcx", "dawsn"])
def test_real_derivatives(oracle: Oracle, name: str) -> None:
    with x64():
        check_ad(oracle, program(name), np.array([-2.5, -0.3, 0.4, 3.5, 7.0, 30.0]), order=1)


@pytest.mark.slow
def test_gamma_derivatives(oracle: Oracle) -> None:
    a, x = np.array([0.5, 1.5, 4.0, 12.0]), np.array([0.7, 2.0, 3.0, 15.0])
    with x64():
        check_ad(oracle, program("gammainc"), a, x, order=1)
        check_ad(oracle, program("gammaincc"), a, x, order=1)


def test_betainc_derivative_in_x(oracle: Oracle) -> None:
    a, b = np.array([0.5, 1.5, 4.0]), np.array([2.0, 0.7, 9.0])
    fn: Program = lambda jnp, lax: lambda x: special_of(jnp).betainc(a, b, x)  # noqa: E731
    with x64():
        # Under jit JAX folds some of the rule's equations on the closed-over (known) a and b
        # at trace time and stages others; Lamina stages them all: values only there.
        check_ad(oracle, fn, np.array([0.1, 0.5, 0.8]), order=1, printed=("jvp", "grad"))


def test_wofz_derivative(oracle: Oracle) -> None:
    fn: Program = lambda jnp, lax: lambda z: special_of(jnp).wofz(z).real  # noqa: E731
    with x64():
        check_ad(oracle, fn, np.complex128(0.3 + 0.8j), order=1, kinds=("jvp",))


@pytest.mark.parametrize("name", ["gammainc", "gammaincc", "betainc", "erfcx", "dawsn", "wofz"])
def test_vmap(oracle: Oracle, name: str) -> None:
    args = {
        "gammainc": (A[:6], X[:6]),
        "gammaincc": (A[:6], X[:6]),
        "betainc": (A[:6], X[:6], U[:6]),
        "erfcx": (np.array(REALS[:6], np.float32),),
        "dawsn": (np.array(REALS[:6], np.float32),),
        "wofz": (_complex_grid(np.complex64)[:6],),
    }[name]
    check_vmap(oracle, program(name), *args)


# bernoulli and the exponential integrals.


@pytest.mark.parametrize(
    "n", [0, 4, *(pytest.param(n, marks=pytest.mark.slow) for n in (1, 2, 3, 7, 12, 30))]
)
def test_bernoulli(oracle: Oracle, n: int) -> None:
    import jax.scipy.special as js

    oracle.check(lambda jnp, lax: lambda: special_of(jnp).bernoulli(n), numerics=False)
    got, want = np.asarray(lamina_core.scipy.special.bernoulli(n)), np.asarray(js.bernoulli(n))
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)
    bad: Any
    for bad in (-1, 1.5):
        with pytest.raises((ValueError, TypeError)) as expected:
            js.bernoulli(bad)
        with pytest.raises(type(expected.value)) as raised:
            lamina_core.scipy.special.bernoulli(bad)
        assert str(raised.value) == str(expected.value)


EXPINT_X = [-40.0, -5.0, -1.5, -0.1, 0.1, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 9.0, 17.0, 40.0, 70.0]
EXPINT_X += [0.0, np.inf, -np.inf, np.nan]


def values(name: str, *args: Any, rtol: float) -> None:
    """Lamina's values (eager and jitted) against JAX's jitted ones. The printed jaxprs differ
    only in the name Lamina's `jnp.piecewise` gives its jit (see test_scipy_special's spence)."""
    import jax
    import jax.scipy.special as js

    ours = getattr(lamina_core.scipy.special, name)
    want = np.asarray(jax.jit(getattr(js, name))(*args))
    for got in (ours(*args), lamina_core.jit(ours)(*args)):
        assert np.asarray(got).dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=rtol * 1e-3)


SMALL_X = [-1.5, 0.5, 3.0, 20.0, 0.0, np.nan]
"""A few points per branch family: each call interprets vectorized while loops (slowly)."""


@pytest.mark.parametrize("name", ["expi", "exp1"])
def test_expi_exp1(name: str) -> None:
    values(name, np.array(SMALL_X, np.float32), rtol=2e-6)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["expi", "exp1"])
def test_expi_exp1_sweep(name: str) -> None:
    values(name, np.array(EXPINT_X, np.float32), rtol=2e-6)
    with x64():
        values(name, np.array(EXPINT_X, np.float64), rtol=1e-13)


@pytest.mark.slow
def test_expn() -> None:
    n = np.array([0.0, 1.0, 3.0, 6000.0], np.float32)[:, None]
    values("expn", n, np.array([0.0, 0.5, 3.0], np.float32), rtol=5e-6)


@pytest.mark.slow
def test_expn_sweep() -> None:
    n = np.array([-1.0, 0.0, 1.0, 2.0, 3.0, 7.0, 30.0, 6000.0], np.float32)[:, None]
    x = np.array([v for v in EXPINT_X if not v < 0] + [-1.0], np.float32)
    values("expn", n, x, rtol=5e-6)
    with x64():
        values("expn", n.astype(np.float64), x.astype(np.float64), rtol=1e-12)


def test_expint_errors() -> None:
    import jax.scipy.special as js

    for name, args in (("expi", (1j,)), ("exp1", (1j,)), ("expn", (1, 1j))):
        with pytest.raises(ValueError) as want:
            getattr(js, name)(*args)
        with pytest.raises(ValueError) as got:
            getattr(lamina_core.scipy.special, name)(*args)
        assert str(got.value) == str(want.value)


@pytest.mark.parametrize(
    "name",
    [
        "expi",
        pytest.param("exp1", marks=pytest.mark.slow),
        pytest.param("expn", marks=pytest.mark.slow),
    ],
)
@pytest.mark.slow
def test_expint_derivatives(name: str) -> None:
    import jax
    import jax.scipy.special as js

    ours, theirs = getattr(lamina_core.scipy.special, name), getattr(js, name)
    x = np.array([-2.5, 0.4, 3.0, 20.0]) if name == "expi" else np.array([0.4, 3.0, 20.0])
    with x64():
        f: Callable[..., Any]
        g: Callable[..., Any]
        if name == "expn":
            f, g = (lambda v: ours(3.0, v)), (lambda v: theirs(3.0, v))
        else:
            f, g = ours, theirs
        got = np.asarray(lamina_core.vmap(lamina_core.grad(f))(x))
        want = np.asarray(jax.vmap(jax.grad(g))(x))
        np.testing.assert_allclose(got, want, rtol=1e-12)
        h = 1e-6
        fd = (np.asarray(f(x + h)) - np.asarray(f(x - h))) / (2 * h)
        np.testing.assert_allclose(got, fd, rtol=1e-6)


@pytest.mark.slow
def test_expint_vmap(oracle: Oracle) -> None:
    x = np.array([0.5, 1.5, 3.0, 9.0], np.float32)
    check_vmap(oracle, program("expi"), x, printed=False)
    check_vmap(oracle, program("exp1"), x, printed=False)
