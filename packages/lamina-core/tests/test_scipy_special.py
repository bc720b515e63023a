"""`lamina_core.scipy.special` against `jax.scipy.special`: printed jaxprs, values (float32
and float64, with 0, inf and nan), gradients against JAX and finite differences, and vmap."""

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


def special_of(jnp: ModuleType) -> Any:
    """The `scipy.special` of the library whose `numpy` the oracle passed."""
    if jnp is lamina_core.numpy:
        return lamina_core.scipy.special
    import jax.scipy.special

    return jax.scipy.special


def program(name: str, *bound: Any, **kw: Any) -> Program:
    def make(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        fn = getattr(special_of(jnp), name)
        return lambda *args: fn(*args, *bound, **kw)

    return make


def some_by_default(cases: list[Any], keep: set[str]) -> list[Any]:
    """`cases` (named by their first item) with all but `keep` marked slow: the default run
    covers a representative subset, the slow session all of them."""
    out = []
    for case in cases:
        items = case if isinstance(case, tuple) else (case,)
        marks = [] if items[0] in keep else [pytest.mark.slow]
        out.append(pytest.param(*items, marks=marks, id=str(items[0])))
    return out


@contextlib.contextmanager
def x64() -> Iterator[None]:
    import jax

    with lamina_core.config(jax_enable_x64=True), jax.enable_x64(True):
        yield


EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan]
REALS = [-7.5, -2.0, -1.5, -0.5, 0.25, 0.5, 1.0, 2.5, 6.0, 30.0, *EDGES]
POSITIVE = [1e-3, 0.1, 0.5, 1.0, 2.0, 7.5, 10.0, 40.0, *EDGES]
UNIT = [0.0, 1e-6, 0.01, 0.1, 0.3, 0.5, 0.8, 0.9, 0.99, 1.0, -0.1, 1.5, np.nan]
NORMAL_ARGS = [-40.0, -15.0, -9.0, -3.0, -0.5, 0.0, 0.5, 3.0, 6.0, 9.0, *EDGES]

UNARY: list[tuple[str, list[float]]] = [
    ("expit", REALS),
    ("logit", UNIT),
    ("entr", [-1.0, *POSITIVE]),
    ("erf", REALS),
    ("erfc", REALS),
    ("erfinv", [-1.0, -0.9, -0.2, 0.0, 0.5, 0.99, 1.0, 1.5, np.nan]),
    ("gammaln", REALS),
    ("digamma", [0.1, 0.5, 1.0, 2.5, 6.0, 30.0, -1.5, np.inf, np.nan]),
    ("gammasgn", [*REALS, -3.0, -2.5]),
    ("gamma", [*REALS, -3.0, -2.5]),
    ("loggamma", REALS),
    ("factorial", [-1.0, 0.0, 1.0, 3.0, 4.5, 10.0, np.inf, np.nan]),
    ("ndtr", NORMAL_ARGS),
    ("ndtri", UNIT),
    ("log_ndtr", NORMAL_ARGS),
    ("spence", [-1.0, 0.0, 0.2, 0.5, 1.0, 1.7, 2.0, 3.0, 10.0, np.inf, np.nan]),
    ("i0e", REALS),
    ("i0", REALS),
    ("i1e", REALS),
    ("i1", REALS),
]


# XLA's float32 lgamma is a few ulps from the exact value the reference evaluator rounds.
LOOSE = {"gamma": 2e-5, "factorial": 1e-5, "beta": 1e-5, "poch": 2e-5, "comb": 2e-5, "i0": 1e-5}
LOOSE |= {"i0e": 1e-5, "i1": 1e-5, "i1e": 1e-5}
# Lamina's jnp.piecewise names its jit `_piecewise_impl` and lacks JAX's `copy` equations.
VALUES_ONLY = {"spence"}


def check(oracle: Oracle, name: str, prog: Program, *args: Any) -> None:
    """JAX's printed jaxpr (unless VALUES_ONLY) and JAX's values, to `LOOSE` or 2e-6."""
    import jax

    if name not in VALUES_ONLY:
        closed = oracle.check(prog, *args, numerics=False)
    else:
        closed = lamina_core.make_jaxpr(prog(lamina_core.numpy, lamina_core.lax))(*args)
    got = oracle.evaluate(closed, list(args))
    want = jax.tree_util.tree_leaves(oracle.jit(prog(oracle.jnp, oracle.lax))(*args))
    tol = LOOSE.get(name, 2e-6)
    for g, w in zip(got, want, strict=True):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tol, atol=tol)


@pytest.mark.parametrize(("name", "values"), UNARY, ids=[u[0] for u in UNARY])
def test_unary_float32(oracle: Oracle, name: str, values: list[float]) -> None:
    check(oracle, name, program(name), np.array(values, np.float32))


@pytest.mark.parametrize(
    ("name", "values"), some_by_default(UNARY, {"ndtr", "ndtri", "log_ndtr", "gammaln", "entr"})
)
def test_unary_float64(oracle: Oracle, name: str, values: list[float]) -> None:
    with x64():
        check(oracle, name, program(name), np.array(values, np.float64))


@pytest.mark.xfail(strict=False, reason="Lamina's jnp.piecewise prints unlike JAX's (see above)")
def test_spence_jaxpr(oracle: Oracle) -> None:
    oracle.check(program("spence"), np.array([0.5, 2.0], np.float32), numerics=False)


@pytest.mark.parametrize(
    "name",
    some_by_default(["expit", "erf", "gammaln", "gamma", "factorial", "entr"], {"expit", "erf"}),
)
def test_unary_integer_and_scalar_inputs(oracle: Oracle, name: str) -> None:
    check(oracle, name, program(name), np.array([0, 1, 3], np.int32))
    check(oracle, name, program(name), np.float32(2.5))


A = np.array([0.0, 0.0, 1.0, 2.0, 0.5, 3.0, -1.0, 2.0, np.nan, 1.0, 12.0], np.float32)
B = np.array([0.0, np.nan, 0.0, 3.0, 0.25, 1.5, 2.0, 9.0, 1.0, np.inf, 20.0], np.float32)
BINARY = [
    "xlogy",
    "xlog1py",
    "rel_entr",
    "kl_div",
    "betaln",
    "beta",
    "comb",
    "poch",
    "boxcox",
    "boxcox1p",
]


@pytest.mark.parametrize("name", BINARY)
def test_binary(oracle: Oracle, name: str) -> None:
    check(oracle, name, program(name), A, B)


@pytest.mark.parametrize("name", some_by_default(BINARY, {"xlogy", "betaln", "rel_entr"}))
def test_binary_float64_broadcast(oracle: Oracle, name: str) -> None:
    with x64():
        check(oracle, name, program(name), A.astype(np.float64)[:, None], B.astype(np.float64))


def test_comb_repetition_and_python_scalars(oracle: Oracle) -> None:
    check(oracle, "comb", program("comb", repetition=True), A, B)
    oracle.check(lambda jnp, lax: lambda x: special_of(jnp).xlogy(x, 2.0), A)


M = np.array([[1.0, 2.0, -np.inf, 0.5], [0.0, 0.5, 1.0, -3.0], [4.0, -1.0, 2.0, 2.0]], np.float32)
SIGNS = np.array([[1.0, -1.0, 0.0, 2.0], [1.0, 1.0, 1.0, 1.0], [0.5, -2.0, 0.0, 1.0]], np.float32)


@pytest.mark.parametrize(
    "call",
    [
        lambda sp: lambda x: sp.logsumexp(x),
        lambda sp: lambda x: sp.logsumexp(x, axis=1, keepdims=True),
        lambda sp: lambda x, b: sp.logsumexp(x, axis=0, b=b),
        lambda sp: lambda x, b: sp.logsumexp(x, axis=1, b=b, return_sign=True),
        lambda sp: lambda x: sp.softmax(x, axis=1),
        lambda sp: lambda x: sp.softmax(x),
        lambda sp: lambda x: sp.log_softmax(x, axis=0),
    ],
    ids=["lse", "lse_axis", "lse_b", "lse_sign", "softmax_axis", "softmax_all", "log_softmax"],
)
def test_reductions(oracle: Oracle, call: Callable[[Any], Any]) -> None:
    fn: Program = lambda jnp, lax: call(special_of(jnp))  # noqa: E731
    nargs = call(lamina_core.scipy.special).__code__.co_argcount
    oracle.check(fn, *(M, SIGNS)[:nargs])


def test_multigammaln(oracle: Oracle) -> None:
    a = np.array([[1.5, 2.0, 7.0], [3.5, 10.0, 40.0]], np.float32)
    oracle.check(program("multigammaln", 3), a)
    oracle.check(program("multigammaln", 1), np.float32(2.5))


# (name, arguments): points where every function is smooth.
SMOOTH: list[tuple[str, tuple[np.ndarray, ...]]] = [
    ("expit", (np.array([-3.0, 0.0, 2.0]),)),
    ("logit", (np.array([0.1, 0.5, 0.8]),)),
    ("entr", (np.array([0.2, 1.0, 3.0]),)),
    ("erf", (np.array([-1.0, 0.3, 2.0]),)),
    ("erfc", (np.array([-1.0, 0.3, 2.0]),)),
    ("erfinv", (np.array([-0.5, 0.1, 0.7]),)),
    ("gammaln", (np.array([0.5, 2.5, 9.0]),)),
    ("gamma", (np.array([-1.5, 0.7, 4.0]),)),
    ("factorial", (np.array([0.5, 2.0, 4.5]),)),
    ("ndtr", (np.array([-2.0, 0.1, 1.5]),)),
    ("ndtri", (np.array([0.05, 0.5, 0.95]),)),
    ("log_ndtr", (np.array([-12.0, -2.0, 0.5, 6.0]),)),
    ("spence", (np.array([0.6, 0.75, 0.9]),)),
    ("xlogy", (np.array([0.5, 2.0, 3.0]), np.array([0.7, 1.5, 4.0]))),
    ("xlog1py", (np.array([0.5, 2.0, 3.0]), np.array([0.7, 1.5, 4.0]))),
    ("rel_entr", (np.array([0.5, 2.0, 3.0]), np.array([0.7, 1.5, 4.0]))),
    ("kl_div", (np.array([0.5, 2.0, 3.0]), np.array([0.7, 1.5, 4.0]))),
    ("betaln", (np.array([0.5, 2.0, 3.0]), np.array([0.7, 1.5, 14.0]))),
    ("beta", (np.array([0.5, 2.0, 3.0]), np.array([0.7, 1.5, 4.0]))),
    ("poch", (np.array([0.5, 2.0, 3.0]), np.array([0.7, 1.5, 2.0]))),
    ("boxcox", (np.array([0.5, 2.0, 3.0]), np.array([0.7, -1.5, 2.0]))),
    ("i0", (np.array([-2.0, 0.3, 4.0]),)),
    ("i1e", (np.array([-2.0, 0.3, 4.0]),)),
]


# Slow to differentiate numerically in the reference evaluator.
HEAVY = {"beta", "betaln", "poch", "spence", "ndtri", "gamma", "log_ndtr"}
GRAD_DEFAULT = {"xlogy", "xlog1py", "logit", "entr", "log_ndtr", "gammaln", "rel_entr", "i0"}


@pytest.mark.parametrize(("name", "args"), some_by_default(SMOOTH, GRAD_DEFAULT))
def test_grad(oracle: Oracle, name: str, args: tuple[np.ndarray, ...]) -> None:
    args32 = tuple(a.astype(np.float32) for a in args)
    printed = name not in VALUES_ONLY
    check_ad(oracle, program(name), *args32, kinds=("jvp", "grad"), printed=printed, order=0)


@pytest.mark.parametrize(("name", "args"), some_by_default(SMOOTH, {"logit", "xlog1py"}))
def test_grad_float64_finite_differences(oracle: Oracle, name: str, args: Any) -> None:
    with x64():
        check_ad(oracle, program(name), *args, kinds=("grad",), printed=False, order=1)


# Second derivatives of the lgamma family need polygamma, which Lamina lacks.
@pytest.mark.parametrize(
    "name", some_by_default(["expit", "logit", "xlogy", "log_ndtr", "ndtri", "erfinv"], {"xlogy"})
)
def test_second_order_finite_differences(name: str) -> None:
    args = next(a for n, a in SMOOTH if n == name)
    with x64():
        check_grads(program(name)(lamina_core.numpy, lamina_core.lax), args, order=2)


def test_xlogy_custom_jvp_at_zero(oracle: Oracle) -> None:
    # JAX's rule skips the `where`: d/dx xlogy(x, 0) at x = 0 is log(0) = -inf.
    check_ad(oracle, program("xlogy"), np.float32(0.0), np.float32(0.0), kinds=("jvp",), order=0)
    check_ad(oracle, program("entr"), np.float32(0.0), kinds=("jvp",), order=0)


@pytest.mark.parametrize(
    "name", some_by_default(["expit", "ndtri", "log_ndtr", "gamma"], {"gamma"})
)
def test_vmap_unary(oracle: Oracle, name: str) -> None:
    x = np.array([[0.1, 0.5], [0.3, 0.9], [0.7, 0.2]], np.float32)
    check_vmap(oracle, program(name), x, in_axes=1)


@pytest.mark.parametrize("name", some_by_default(["xlogy", "poch", "rel_entr"], {"xlogy"}))
def test_vmap_binary(oracle: Oracle, name: str) -> None:
    x = np.array([[0.1, 0.5], [0.3, 0.9], [0.7, 0.2]], np.float32)
    check_vmap(oracle, program(name), x, x[0], in_axes=(0, None))


@pytest.mark.slow
def test_vmap_logsumexp(oracle: Oracle) -> None:
    check_vmap(oracle, program("logsumexp", 1), M[:, None, :].repeat(2, 1))


BAD_CALLS: list[tuple[str, Callable[[Any], Any]]] = [
    ("ndtr_int", lambda sp: sp.ndtr(np.array([1, 2], np.int32))),
    ("ndtri_int", lambda sp: sp.ndtri(np.array([1, 2], np.int32))),
    ("spence_int", lambda sp: sp.spence(np.array([1, 2], np.int32))),
    ("log_ndtr_order", lambda sp: sp.log_ndtr(np.float32(1.0), series_order=-1)),
    ("log_ndtr_big", lambda sp: sp.log_ndtr(np.float32(1.0), series_order=31)),
    ("log_ndtr_float", lambda sp: sp.log_ndtr(np.float32(1.0), series_order=1.0)),
    ("factorial_exact", lambda sp: sp.factorial(3, exact=True)),
    ("entr_complex", lambda sp: sp.entr(np.complex64(1.0))),
    ("rel_entr_complex", lambda sp: sp.rel_entr(np.complex64(1.0), 1.0)),
    ("beta_complex", lambda sp: sp.beta(np.complex64(1.0), 1.0)),
    ("gammasgn_complex", lambda sp: sp.gammasgn(np.complex64(1.0))),
    ("poch_complex", lambda sp: sp.poch(np.complex64(1.0), 1.0)),
]


@pytest.mark.parametrize("case", BAD_CALLS, ids=[c[0] for c in BAD_CALLS])
def test_errors_match_jax(case: tuple[str, Callable[[Any], Any]]) -> None:
    import jax.scipy.special

    _, call = case
    with pytest.raises(Exception) as theirs:
        call(jax.scipy.special)
    with pytest.raises(type(theirs.value)) as ours:
        call(lamina_core.scipy.special)
    assert str(ours.value) == str(theirs.value)


def test_public_names_exist_in_jax() -> None:
    import jax.scipy.special

    for name in lamina_core.scipy.special.__all__:
        assert hasattr(jax.scipy.special, name), name


@pytest.mark.slow
@pytest.mark.parametrize(("name", "values"), UNARY, ids=[u[0] for u in UNARY])
def test_unary_sweep(oracle: Oracle, name: str, values: list[float]) -> None:
    grid = np.linspace(-12.0, 12.0, 241, dtype=np.float32)
    if name in ("logit", "ndtri", "erfinv"):
        grid = np.linspace(-0.05, 1.05, 221, dtype=np.float32)
    check(oracle, name, program(name), grid)
    with x64():
        check(oracle, name, program(name), grid.astype(np.float64))
