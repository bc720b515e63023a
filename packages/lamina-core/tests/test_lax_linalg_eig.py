"""`lax.linalg`'s `eig`, `hessenberg`, `tridiagonal`, `schur` and `tridiagonal_solve`, the enums,
and `numpy`'s `linalg.eig`, `linalg.eigvals`, `roots` and `polyfit`, against JAX 0.10.2: values
(Lamina's NumPy references against JAX's LAPACK kernels; eigenvectors up to a phase per column,
as NumPy's LAPACK build may pick another; Schur forms checked as decompositions, as they are
not unique), printed jaxprs, jvp against JAX and finite differences, vmap against a Python
loop, and JAX's errors."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import lamina_core as lc
from lamina_core.config._config import config
from lamina_core.lax import linalg as ll
from lamina_core.testing import check_grads, sweep

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.oracle
jl = jax.lax.linalg
jnp = jax.numpy
lnp = lc.numpy

_rng = np.random.default_rng(23)


def _general(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    x = _rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * _rng.standard_normal(shape)
    return x.astype(dtype)


def _same_jaxpr(ours: Callable[..., Any], theirs: Callable[..., Any], *args: Any) -> None:
    got, want = str(lc.make_jaxpr(ours)(*args)), str(jax.make_jaxpr(theirs)(*args))
    assert got == want, f"\n--- lamina ---\n{got}\n--- jax ---\n{want}"


def _close(got: Any, want: Any, tol: float = 1e-4) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
    scale = max(1.0, float(np.max(np.abs(w), initial=0.0)))
    np.testing.assert_allclose(g, w, rtol=tol, atol=tol * scale)


def _same_columns_up_to_phase(got: Any, want: Any, tol: float = 1e-4) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape and g.dtype == w.dtype
    overlap = np.abs(np.einsum("...ij,...ij->...j", np.conj(g), w))
    np.testing.assert_allclose(overlap, np.ones_like(overlap), atol=tol)


# --- eig --------------------------------------------------------------------------------------

EIG_CASES = [
    ((4, 4), np.float32),
    ((2, 3, 3), np.float32),
    ((3, 3), np.complex64),
    ((2, 1, 2, 2), np.complex64),
]


@pytest.mark.parametrize(
    ("shape", "dtype"), sweep(EIG_CASES, [f"eig_{s}_{np.dtype(d).name}" for s, d in EIG_CASES])
)
def test_eig_values(shape: tuple[int, ...], dtype: Any) -> None:
    x = _general(*shape, dtype=dtype)
    w, vl, vr = ll.eig(x)
    w_want, vl_want, vr_want = jax.jit(jl.eig)(x)
    # LAPACK returns the eigenvalues in the same order from the same Schur form.
    _close(w, w_want)
    _same_columns_up_to_phase(vr, vr_want)
    _same_columns_up_to_phase(vl, vl_want)
    (w_only,) = ll.eig(x, compute_left_eigenvectors=False, compute_right_eigenvectors=False)
    _close(w_only, w_want)


def test_eig_normalization_and_definition() -> None:
    x = _general(2, 4, 4)
    w, vl, vr = (np.asarray(a) for a in ll.eig(x))
    np.testing.assert_allclose(x @ vr, vr * w[..., None, :], atol=1e-4)
    np.testing.assert_allclose(
        np.conj(np.swapaxes(vl, -1, -2)) @ x,
        w[..., :, None] * np.conj(np.swapaxes(vl, -1, -2)),
        atol=1e-4,
    )
    for v in (vl, vr):
        np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, atol=1e-5)
        top = np.take_along_axis(v, np.argmax(np.abs(v), axis=-2)[..., None, :], axis=-2)
        np.testing.assert_allclose(np.imag(top), 0.0, atol=1e-6)


def test_eig_jaxprs() -> None:
    x = _general(2, 3, 3)
    _same_jaxpr(ll.eig, jl.eig, x)
    _same_jaxpr(
        lambda a: ll.eig(a, compute_left_eigenvectors=False),
        lambda a: jl.eig(a, compute_left_eigenvectors=False),
        x,
    )
    _same_jaxpr(lnp.linalg.eigvals, jnp.linalg.eigvals, x)
    _same_jaxpr(lnp.linalg.eig, jnp.linalg.eig, x)
    _same_jaxpr(lambda a: ll.eig(a * 1.0), lambda a: jl.eig(a * 1.0), np.eye(2, dtype=np.float64))


def test_eig_errors() -> None:
    for bad in (
        np.zeros((2, 3), np.float32),
        np.zeros((2, 2), np.int32),
        np.zeros((3,), np.float32),
    ):
        with pytest.raises(Exception) as want:
            jl.eig(bad)
        with pytest.raises(type(want.value)) as got:
            ll.eig(bad)
        assert str(got.value) == str(want.value)
    with pytest.raises(ValueError, match="must be a square matrix"):
        lnp.linalg.eig(np.zeros((2, 3), np.float32))
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
        lc.jvp(lambda a: ll.eig(a)[1], (_general(3, 3),), (_general(3, 3),))
    with pytest.warns(DeprecationWarning, match="use_magma is deprecated"):
        ll.eig(_general(2, 2), use_magma=False)


def test_eig_enums() -> None:
    for name in ("EigImplementation", "EighImplementation", "SvdAlgorithm"):
        ours, theirs = getattr(ll, name), getattr(jl, name)
        assert [(m.name, m.value) for m in ours] == [(m.name, m.value) for m in theirs]


def test_eigvals_jvp() -> None:
    x, t = _general(3, 3), _general(3, 3)

    def f_ours(a: Any) -> Any:
        return ll.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]

    def f_jax(a: Any) -> Any:
        return jl.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]

    w, dw = lc.jvp(f_ours, (x,), (t,))
    w_want, dw_want = jax.jvp(f_jax, (x,), (t,))
    _close(w, w_want)
    _close(dw, dw_want, 1e-3)
    check_grads(
        lambda a: lnp.real(f_ours(a)).sum(), [x.astype(np.float64)], order=1, modes=("fwd",)
    )


@pytest.mark.slow
def test_eigvec_jvp() -> None:
    x = _general(3, 3, dtype=np.complex64)
    t = _general(3, 3, dtype=np.complex64)

    def ours(a: Any) -> Any:
        return ll.eig(a, enable_eigvec_derivs=True)

    def theirs(a: Any) -> Any:
        return jl.eig(a, enable_eigvec_derivs=True)

    _, tangents = lc.jvp(ours, (x,), (t,))
    _, tangents_want = jax.jvp(theirs, (x,), (t,))
    # The tangents follow the eigenvectors' normalization: compare after fixing each
    # primal column's phase alike (both are geev's here, up to NumPy's LAPACK build).
    _close(tangents[0], tangents_want[0], 1e-3)
    for i in (1, 2):
        np.testing.assert_allclose(
            np.abs(np.asarray(tangents[i])), np.abs(np.asarray(tangents_want[i])), atol=2e-3
        )


def test_eig_vmap() -> None:
    x = _general(3, 2, 2)
    got = lc.vmap(ll.eig)(x)
    for i in range(3):
        want = ll.eig(x[i])
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(np.asarray(g)[i], np.asarray(w), atol=1e-6)
    moved = lc.vmap(lnp.linalg.eigvals, in_axes=1)(np.moveaxis(x, 0, 1))
    np.testing.assert_allclose(np.asarray(moved), np.asarray(lnp.linalg.eigvals(x)), atol=1e-6)


def test_numpy_eig_eigvals() -> None:
    x = _general(2, 3, 3)
    w, v = lnp.linalg.eig(x)
    w_want, v_want = jnp.linalg.eig(x)
    _close(w, w_want)
    _same_columns_up_to_phase(v, v_want)
    _close(lnp.linalg.eigvals(x), jnp.linalg.eigvals(x))
    i = np.arange(4, dtype=np.int32).reshape(2, 2)
    _close(lnp.linalg.eigvals(i), jnp.linalg.eigvals(i))
    _close(lnp.poly(x[0]), jnp.poly(x[0]))


# --- roots and polyfit ------------------------------------------------------------------------


ROOTS_CASES = [
    [1.0, -3.0, 2.0],
    [0.0, 0.0, 1.0, 2.0],
    [2.0],
    [0.0, 0.0],
    [1.0, 0.0, 0.0, 1.0],
]


@pytest.mark.parametrize("p", sweep(ROOTS_CASES, [f"roots_{i}" for i in range(5)], unpack=False))
def test_roots(p: list[float]) -> None:
    arr = np.asarray(p, np.float32)

    def key(r: Any) -> Any:
        r = np.asarray(r)
        return r[np.lexsort((r.imag.round(4), r.real.round(4)))]

    got, want = lnp.roots(arr), jnp.roots(arr)
    _close(key(got), key(want))
    got, want = lnp.roots(arr, strip_zeros=False), jnp.roots(arr, strip_zeros=False)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(key(got), key(want), atol=1e-4)


def test_roots_errors() -> None:
    with pytest.raises(ValueError, match=r"Input must be a rank-1 array\."):
        lnp.roots(np.ones((2, 2), np.float32))
    with pytest.raises(lc.ConcretizationTypeError, match="pass strip_zeros=False"):
        lc.make_jaxpr(lnp.roots)(np.ones(3, np.float32))


X = np.linspace(-1.0, 2.0, 9).astype(np.float32)
Y = (X**3 - X + np.cos(X)).astype(np.float32)
Y2 = np.stack([Y, 2 * Y - 1], axis=1)
W = (X + 2.0).astype(np.float32)
POLYFIT_CASES: list[tuple[Any, int, Any]] = [
    (Y, 2, {}),
    (Y2, 3, {}),
    (Y, 2, {"full": True}),
    (Y2, 1, {"full": True, "rcond": 1e-3}),
    (Y, 2, {"cov": True}),
    (Y2, 2, {"cov": "unscaled"}),
    (Y, 3, {"w": W}),
    (Y2, 2, {"w": W, "cov": True}),
]


@pytest.mark.parametrize(
    ("y", "deg", "kwargs"),
    sweep(POLYFIT_CASES, [f"polyfit_{i}" for i in range(len(POLYFIT_CASES))]),
)
def test_polyfit(y: Any, deg: int, kwargs: dict[str, Any]) -> None:
    got, want = lnp.polyfit(X, y, deg, **kwargs), jnp.polyfit(X, y, deg, **kwargs)
    got_leaves, want_leaves = jax.tree.leaves(got), jax.tree.leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves, strict=True):
        _close(g, w, 2e-3)


def test_polyfit_errors() -> None:
    cases: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((X, Y, -1), {}),
        ((X[:, None], Y, 1), {}),
        ((X, Y[:3], 1), {}),
        ((X[:0], Y[:0], 1), {}),
        ((X, Y, 1), {"w": W[:3]}),
        ((X[:3], Y[:3], 3), {"cov": True}),
    ]
    for args, kwargs in cases:
        with pytest.raises(Exception) as want:
            jnp.polyfit(*args, **kwargs)
        with pytest.raises(type(want.value), match=str(want.value)):
            lnp.polyfit(*args, **kwargs)


# --- hessenberg, tridiagonal, schur -----------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_hessenberg(dtype: Any) -> None:
    x = _general(2, 4, 4, dtype=dtype)
    for g, w in zip(ll.hessenberg(x), jax.jit(jl.hessenberg)(x), strict=True):
        _close(g, w)
    _same_jaxpr(ll.hessenberg, jl.hessenberg, x)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("lower", [True, False])
def test_tridiagonal(dtype: Any, lower: bool) -> None:
    x = _general(2, 4, 4, dtype=dtype)
    f = jax.jit(lambda a: jl.tridiagonal(a, lower=lower))
    for g, w in zip(ll.tridiagonal(x, lower=lower), f(x), strict=True):
        _close(g, w)
    _same_jaxpr(
        lambda a: ll.tridiagonal(a, lower=lower), lambda a: jl.tridiagonal(a, lower=lower), x
    )


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_schur(dtype: Any) -> None:
    x = _general(2, 4, 4, dtype=dtype)
    t, q = (np.asarray(a) for a in ll.schur(x))
    t_want, _ = jax.jit(jl.schur)(x)
    assert t.dtype == np.asarray(t_want).dtype and t.shape == t_want.shape
    qh = np.conj(np.swapaxes(q, -1, -2))
    np.testing.assert_allclose(q @ t @ qh, x, atol=1e-4)
    np.testing.assert_allclose(qh @ q, np.broadcast_to(np.eye(4), q.shape), atol=1e-5)
    below = -2 if dtype == np.float32 else -1
    np.testing.assert_allclose(np.tril(t, below), 0, atol=1e-5)
    got_eigs = np.sort_complex(np.linalg.eigvals(t).ravel())
    np.testing.assert_allclose(
        got_eigs, np.sort_complex(np.linalg.eigvals(np.asarray(t_want)).ravel()), atol=1e-4
    )
    _same_jaxpr(ll.schur, jl.schur, x)
    _same_jaxpr(
        lambda a: ll.schur(a, compute_schur_vectors=False),
        lambda a: jl.schur(a, compute_schur_vectors=False),
        x,
    )


def test_reduction_errors_and_vmap() -> None:
    cases: list[tuple[Callable[..., Any], Callable[..., Any], np.ndarray]] = [
        (ll.hessenberg, jl.hessenberg, np.zeros((2, 3), np.float32)),
        (ll.tridiagonal, jl.tridiagonal, np.zeros((2, 3), np.float32)),
        (ll.tridiagonal, jl.tridiagonal, np.zeros((0, 0), np.float32)),
        (ll.schur, jl.schur, np.zeros((2, 3), np.float32)),
        (ll.schur, jl.schur, np.zeros((2, 2), np.int32)),
    ]
    for ours, theirs, bad in cases:
        with pytest.raises(Exception) as want:
            theirs(bad)
        with pytest.raises(type(want.value)) as got:
            ours(bad)
        assert str(got.value) == str(want.value)
    x = _general(3, 3, 3)
    got = lc.vmap(ll.tridiagonal, in_axes=2)(np.moveaxis(x, 0, 2))
    for i in range(3):
        for g, w in zip(got, ll.tridiagonal(x[i]), strict=True):
            np.testing.assert_allclose(np.asarray(g)[i], np.asarray(w), atol=1e-6)


# --- tridiagonal_solve ------------------------------------------------------------------------


def _tridiagonal_args(
    batch: tuple[int, ...], m: int, k: int, dtype: Any = np.float32
) -> list[np.ndarray]:
    dl, du = _general(*batch, m, dtype=dtype), _general(*batch, m, dtype=dtype)
    d = (_general(*batch, m, dtype=dtype) + 4).astype(dtype)
    dl[..., 0] = 0
    du[..., -1] = 0
    return [dl, d, du, _general(*batch, m, k, dtype=dtype)]


TS_CASES = [((), 4, 2, np.float32), ((2,), 5, 3, np.float32), ((2, 1), 3, 1, np.complex64)]


@pytest.mark.parametrize(
    ("batch", "m", "k", "dtype"), sweep(TS_CASES, [f"ts_{c[0]}_{c[1]}" for c in TS_CASES])
)
def test_tridiagonal_solve_values(batch: tuple[int, ...], m: int, k: int, dtype: Any) -> None:
    args = _tridiagonal_args(batch, m, k, dtype)
    _close(ll.tridiagonal_solve(*args), jax.jit(jl.tridiagonal_solve)(*args))
    _same_jaxpr(ll.tridiagonal_solve, jl.tridiagonal_solve, *args)


@pytest.fixture
def x64() -> Iterator[None]:
    from jax._src import config as jax_config

    with config(jax_enable_x64=True), jax_config.enable_x64(True):
        yield


def test_tridiagonal_solve_ad(x64: None) -> None:
    args = _tridiagonal_args((2,), 4, 2, np.float64)
    tangents = [_general(*a.shape, dtype=np.float64) for a in args]
    _, got = lc.jvp(ll.tridiagonal_solve, tuple(args), tuple(tangents))
    _, want = jax.jvp(jl.tridiagonal_solve, tuple(args), tuple(tangents))
    _close(got, want, 1e-8)
    check_grads(ll.tridiagonal_solve, args, order=1)
    # Reverse mode in b alone goes through the transpose rule.
    dl, d, du, b = args

    def f(rhs: Any) -> Any:
        return (ll.tridiagonal_solve(dl, d, du, rhs) ** 2).sum()

    check_grads(f, [b], order=1, modes=("rev",))
    _same_jaxpr(
        lc.grad(lambda rhs: ll.tridiagonal_solve(dl, d, du, rhs).sum()),
        jax.grad(lambda rhs: jl.tridiagonal_solve(dl, d, du, rhs).sum()),
        b,
    )


def test_tridiagonal_solve_vmap_and_errors() -> None:
    dl, d, du, b = _tridiagonal_args((3,), 4, 2)
    want = np.stack([np.asarray(ll.tridiagonal_solve(dl[i], d[i], du[i], b[i])) for i in range(3)])
    np.testing.assert_allclose(
        np.asarray(lc.vmap(ll.tridiagonal_solve)(dl, d, du, b)), want, atol=1e-6
    )
    # Only b mapped: the mapped axis folds into b's columns.
    bs = np.moveaxis(b, 0, 2)
    got = lc.vmap(ll.tridiagonal_solve, in_axes=(None, None, None, 2), out_axes=2)(
        dl[0], d[0], du[0], bs
    )
    want = np.stack(
        [np.asarray(ll.tridiagonal_solve(dl[0], d[0], du[0], b[i])) for i in range(3)], 2
    )
    np.testing.assert_allclose(np.asarray(got), want, atol=1e-6)
    _same_jaxpr(
        lc.vmap(ll.tridiagonal_solve, in_axes=(None, None, None, 2)),
        jax.vmap(jl.tridiagonal_solve, in_axes=(None, None, None, 2)),
        dl[0],
        d[0],
        du[0],
        bs,
    )
    for bad in [(dl, d[:, :3], du, b), (dl, d, du, b[:, :3]), (dl, d, du.astype(np.complex64), b)]:
        with pytest.raises(Exception) as want_err:
            jl.tridiagonal_solve(*bad)
        with pytest.raises(type(want_err.value)) as got_err:
            ll.tridiagonal_solve(*bad)
        assert str(got_err.value) == str(want_err.value)
