"""`lax.igamma`, `igammac`, `igamma_grad_a`, `betainc` (`regularized_incomplete_beta`) and
`random_gamma_grad` against JAX 0.10.2 and SciPy: Lamina's float64 references against SciPy
and XLA's values, the special values XLA defines, printed jaxprs (of the primitives, their
derivatives and batches, and of `random_gamma_grad`'s staged loops), JAX's errors, the jvp
rules against JAX's and finite differences, and vmap against a Python loop."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina_core as lc
from lamina_core import lax as ll
from lamina_core.config._config import config
from lamina_core.lax import _igamma_refs as refs
from lamina_core.testing import sweep

jax = pytest.importorskip("jax")
special = pytest.importorskip("scipy.special")
pytestmark = pytest.mark.oracle
jl = jax.lax

GAMMA_NAMES = ["igamma", "igammac", "igamma_grad_a", "random_gamma_grad"]
EDGES = np.array(
    [-1.0, 0.0, 1e-30, 1e-5, 0.1, 0.5, 1, 1.5, 2, 3.7, 10, 25, 99, 1e3, np.inf, np.nan]
)
BETA_AB = np.array([-1.0, 0.0, 1e-3, 0.5, 1, 2, 10, 1e3, np.inf, np.nan])
BETA_X = np.array([-0.1, 0.0, 1e-3, 0.2, 0.5, 0.9, 0.999, 1, 1.5, np.nan])


def _some(names: list[str], keep: set[str]) -> list[Any]:
    """`names` with all but `keep` marked slow (eager loops in NumPy take seconds each)."""
    return [pytest.param(n, marks=[] if n in keep else [pytest.mark.slow], id=n) for n in names]


def _same_jaxpr(ours: Callable[..., Any], theirs: Callable[..., Any], *args: Any) -> None:
    mine, want = str(lc.make_jaxpr(ours)(*args)), str(jax.make_jaxpr(theirs)(*args))
    assert mine == want, f"\n--- lamina ---\n{mine}\n--- jax ---\n{want}"


def _x64() -> Any:
    from jax._src import config as jax_config

    stack = contextlib.ExitStack()
    stack.enter_context(config(jax_enable_x64=True))
    stack.enter_context(jax_config.enable_x64(True))
    return stack


def _gamma_grid() -> tuple[np.ndarray, np.ndarray]:
    a = np.geomspace(0.01, 300.0, 40)[:, None]
    x = np.geomspace(0.001, 400.0, 45)[None, :]
    a, x = np.broadcast_arrays(a, x)
    return a.ravel(), x.ravel()


def _beta_grid() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    ab = np.geomspace(0.05, 100.0, 14)
    x = np.linspace(0.01, 0.99, 15)
    a, b, x = np.meshgrid(ab, ab, x, indexing="ij")
    return a.ravel(), b.ravel(), x.ravel()


# The references themselves.


def test_gamma_references_are_scipys() -> None:
    a, x = _gamma_grid()
    np.testing.assert_allclose(refs.igamma(a, x), special.gammainc(a, x), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(refs.igammac(a, x), special.gammaincc(a, x), rtol=1e-12, atol=1e-300)
    h = 1e-6 * a
    # Difference whichever of P and Q is small (the other cancels): dP/da = -dQ/da.
    lower = (special.gammainc(a + h, x) - special.gammainc(a - h, x)) / (2 * h)
    upper = (special.gammaincc(a - h, x) - special.gammaincc(a + h, x)) / (2 * h)
    slope = np.where(special.gammainc(a, x) < 0.5, lower, upper)
    np.testing.assert_allclose(refs.igamma_grad_a(a, x), slope, rtol=1e-5, atol=1e-9)
    # x(a) at fixed P: dx/da = -(dP/da) / (dP/dx), dP/dx the gamma density.
    density = np.exp((a - 1) * np.log(x) - x - special.gammaln(a))
    keep = density > 1e-200
    np.testing.assert_allclose(
        refs.random_gamma_grad(a, x)[keep], (-slope / density)[keep], rtol=1e-5, atol=1e-9
    )


def test_beta_reference_is_scipys() -> None:
    a, b, x = _beta_grid()
    np.testing.assert_allclose(refs.betainc(a, b, x), special.betainc(a, b, x), rtol=1e-11)


# Values: Lamina's references (eager, no runtime) against XLA's, jitted in JAX.


@pytest.mark.parametrize("name", _some(GAMMA_NAMES, {"igamma"}))
def test_float64_values_are_jaxs(name: str) -> None:
    a, x = _gamma_grid()
    with _x64():
        got = np.asarray(getattr(ll, name)(a, x))
        want = np.asarray(jax.jit(getattr(jl, name))(a, x))
    assert got.dtype == want.dtype == np.float64
    # XLA sums until the terms fall below eps: a few ulps. The derivatives take digamma, whose
    # reference is good to about 1e-11 (see `_special_refs.digamma`).
    rtol = 1e-11 if name in ("igamma", "igammac") else 1e-9
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-15)


def test_betainc_float64_values_are_jaxs() -> None:
    a, b, x = _beta_grid()
    with _x64():
        got = np.asarray(ll.betainc(a, b, x))
        want = np.asarray(jax.jit(jl.betainc)(a, b, x))
    assert got.dtype == want.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("name", _some([*GAMMA_NAMES, "betainc"], {"betainc"}))
def test_float32_values_are_jaxs(name: str) -> None:
    args = _beta_grid() if name == "betainc" else _gamma_grid()
    args32 = tuple(v.astype(np.float32) for v in args)
    got = np.asarray(getattr(ll, name)(*args32))
    with _x64():  # XLA's float32 loops lose ulps; its float64 values rounded are the truth
        want = np.asarray(jax.jit(getattr(jl, name))(*args32)).astype(np.float32)
        wide = tuple(v.astype(np.float64) for v in args32)
        exact = np.asarray(jax.jit(getattr(jl, name))(*wide)).astype(np.float32)
    assert got.dtype == want.dtype == np.float32
    if name == "random_gamma_grad":
        # Not a primitive: Lamina runs XLA's float32 loops too (with float64-rounded lgamma,
        # digamma, log), so it agrees with JAX's float32 values, not with the float64 ones.
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-6)
        return
    # The reference itself (what eager evaluation runs without the runtime) to float32's ulp;
    # `got` may come from XLA's float32 loops when a runtime is imported in the session.
    reference = getattr(refs, name)(*args32).astype(np.float32)
    np.testing.assert_allclose(reference, exact, rtol=2e-6, atol=1e-30)
    np.testing.assert_allclose(got, want, rtol=5e-3, atol=1e-6)


def _edge_cases(name: str) -> tuple[np.ndarray, ...]:
    if name == "betainc":
        return tuple(v.ravel() for v in np.meshgrid(BETA_AB, BETA_AB, BETA_X, indexing="ij"))
    return tuple(v.ravel() for v in np.meshgrid(EDGES, EDGES, indexing="ij"))


@pytest.mark.parametrize("name", _some([*GAMMA_NAMES, "betainc"], {"igamma", "betainc"}))
def test_special_values_are_xlas(name: str) -> None:
    args = _edge_cases(name)
    with _x64():
        got = np.asarray(getattr(ll, name)(*args))
        want = np.asarray(jax.jit(getattr(jl, name))(*args))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    # Away from the loops' tolerances (a or b near 0 in betainc), the values agree too.
    np.testing.assert_allclose(got, want, rtol=5e-3, atol=1e-12)


def _jaxpr_cases() -> list[Any]:
    dtypes: list[Any] = [np.float32, np.float64, np.float16, "bfloat16"]
    cases = [(name, dtype) for dtype in dtypes for name in [*GAMMA_NAMES, "betainc"]]
    ids = [f"{n}-{d if isinstance(d, str) else d.__name__}" for n, d in cases]
    return sweep(cases, ids, kind=lambda case_id: case_id.split("-")[0])


@pytest.mark.parametrize(("name", "dtype"), _jaxpr_cases())
def test_jaxprs_are_jaxs(name: str, dtype: Any) -> None:
    n_args = 3 if name == "betainc" else 2
    args = [np.linspace(0.1, 0.9, 6).astype(dtype).reshape(2, 3) for _ in range(n_args)]
    with _x64():
        _same_jaxpr(getattr(ll, name), getattr(jl, name), *args)
    if name == "random_gamma_grad" and dtype == np.float32:
        # Weak scalars, and a weak scalar against an array (the operators promote as JAX's).
        _same_jaxpr(ll.random_gamma_grad, jl.random_gamma_grad, 1.0, 2.0)
        _same_jaxpr(ll.random_gamma_grad, jl.random_gamma_grad, args[0], 2.0)


def test_derivative_jaxprs_are_jaxs() -> None:
    a, x = np.float32(1.5), np.float32(2.5)
    for name in ("igamma", "igammac"):
        ours, theirs = getattr(ll, name), getattr(jl, name)
        _same_jaxpr(lc.grad(ours, (0, 1)), jax.grad(theirs, (0, 1)), a, x)
        _same_jaxpr(lc.grad(ours, (0, 1)), jax.grad(theirs, (0, 1)), 1.5, 2.5)
    _same_jaxpr(lc.grad(ll.betainc, 2), jax.grad(jl.betainc, 2), a, x, np.float32(0.3))
    v = np.linspace(0.5, 2, 4, dtype=np.float32)
    _same_jaxpr(lc.vmap(ll.igamma, (0, None)), jax.vmap(jl.igamma, (0, None)), v, x)
    _same_jaxpr(lc.vmap(ll.betainc, (None, 0, 0)), jax.vmap(jl.betainc, (None, 0, 0)), a, v, v / 3)


# Errors.


def _errors(ours: Callable[..., Any], theirs: Callable[..., Any], *args: Any) -> None:
    with pytest.raises(Exception) as want:
        theirs(*args)
    with pytest.raises(type(want.value)) as got:
        ours(*args)
    assert str(got.value) == str(want.value)


def test_errors_are_jaxs() -> None:
    f32, i32, f16 = np.float32(1), np.int32(1), np.float16(1)
    for name in ("igamma", "igammac", "igamma_grad_a"):
        ours, theirs = getattr(ll, name), getattr(jl, name)
        _errors(ours, theirs, i32, f32)
        _errors(ours, theirs, f32, i32)
        _errors(ours, theirs, f32, f16)
        _errors(ours, theirs, np.ones(2, np.float32), np.ones(3, np.float32))
    _errors(ll.betainc, jl.betainc, f32, f32, i32)
    _errors(ll.betainc, jl.betainc, f32, f16, f32)
    _errors(ll.betainc, jl.betainc, np.ones(2, np.float32), np.ones(3, np.float32), f32)
    _errors(lc.grad(ll.betainc), jax.grad(jl.betainc), f32, f32, np.float32(0.3))
    _errors(lc.grad(ll.betainc, 1), jax.grad(jl.betainc, 1), f32, f32, np.float32(0.3))
    _errors(lc.grad(ll.igamma_grad_a), jax.grad(jl.igamma_grad_a), f32, f32)


# Derivatives and batching.


@pytest.mark.slow
def test_jvps_are_jaxs_and_finite_differences() -> None:
    a = np.array([0.3, 1.0, 2.5, 7.0, 30.0])
    x = np.array([0.2, 1.5, 2.0, 9.0, 25.0])
    ta, tx = np.array([0.7, -1.0, 0.3, 2.0, 1.0]), np.array([1.0, 0.5, -0.2, 1.0, -3.0])
    h = 1e-6
    with _x64():
        for name in ("igamma", "igammac"):
            ours, theirs = getattr(ll, name), getattr(jl, name)
            _, got = lc.jvp(ours, (a, x), (ta, tx))
            _, want = jax.jvp(theirs, (a, x), (ta, tx))
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-9)
            fd = (
                np.asarray(ours(a + h * ta, x + h * tx)) - np.asarray(ours(a - h * ta, x - h * tx))
            ) / (2 * h)
            np.testing.assert_allclose(np.asarray(got), fd, rtol=1e-6, atol=1e-9)
        b, xb, tb = a[::-1].copy(), np.array([0.1, 0.3, 0.5, 0.7, 0.95]), np.ones(5)
        _, got = lc.jvp(lambda x: ll.betainc(a, b, x), (xb,), (tb,))
        _, want = jax.jvp(lambda x: jl.betainc(a, b, x), (xb,), (tb,))
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-11)
        fd = (np.asarray(ll.betainc(a, b, xb + h)) - np.asarray(ll.betainc(a, b, xb - h))) / (2 * h)
        np.testing.assert_allclose(np.asarray(got), fd, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", _some([*GAMMA_NAMES, "betainc"], {"igamma", "betainc"}))
def test_vmap_is_a_loop(name: str) -> None:
    rng = np.random.default_rng(0)
    n_args = 3 if name == "betainc" else 2
    args = [rng.uniform(0.1, 3.0, (4, 3)).astype(np.float32) for _ in range(n_args)]
    args[-1] = args[-1] / 3.0  # x in (0, 1) for betainc
    fn = getattr(ll, name)
    # Every operand mapped on axis 0, then the first unmapped and the last mapped on axis 1.
    got = np.asarray(lc.vmap(fn)(*args))
    want = np.stack([np.asarray(fn(*(v[i] for v in args))) for i in range(4)])
    np.testing.assert_allclose(got, want, rtol=1e-6)
    in_axes = (None, *([0] * (n_args - 2)), 1)
    mixed = [args[0][0], *args[1:-1], args[-1].T]
    got = np.asarray(lc.vmap(fn, in_axes)(*mixed))
    want = np.stack([np.asarray(fn(args[0][0], *(v[i] for v in args[1:]))) for i in range(4)])
    np.testing.assert_allclose(got, want, rtol=1e-6)
