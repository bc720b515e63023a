"""`lamina.scipy.linalg`'s special matrices, expm, expm_frechet, polar, eigh_tridiagonal,
schur, rsf2csf, funm, hessenberg, sqrtm, qr_multiply and solve_sylvester run on XLA, eager
and jitted, against `jax.scipy.linalg`; gradients of expm against JAX's and finite differences;
vmap against a Python loop."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina
import lamina.scipy.linalg

jax = pytest.importorskip("jax")
pytest.importorskip("jax.scipy.linalg")

A3 = np.array([[0.1, 0.2, 0.0], [0.3, -0.2, 0.5], [0.0, 0.4, 0.1]], np.float32)
G3 = np.array([[1.0, 2.0, 3.0], [5.0, 4.0, 2.0], [3.0, 2.0, 1.0]], np.float32)
WIDE = np.arange(6, dtype=np.float32).reshape(2, 3) + 1
F3 = np.array([1.0, -2.0, 3.5], np.float32)
F4 = np.array([0.5, 2.0, -1.0, 4.0], np.float32)
D20 = np.linspace(-1, 2, 20).astype(np.float32)
E19 = np.cos(np.arange(19)).astype(np.float32)

CASES: list[tuple[str, Callable[[Any], Callable[..., Any]], tuple[Any, ...]]] = [
    ("expm", lambda la: la.expm, (A3,)),
    ("expm_squarings", lambda la: la.expm, (G3,)),
    ("expm_batch", lambda la: la.expm, (np.stack([A3, G3 * 0.3]),)),
    ("expm_upper", lambda la: lambda a: la.expm(a, upper_triangular=True), (np.triu(G3) * 0.5,)),
    ("expm_frechet", lambda la: la.expm_frechet, (A3 * 3, G3)),
    ("polar", lambda la: lambda a: la.polar(a, method="svd"), (G3,)),
    ("polar_left", lambda la: lambda a: la.polar(a, side="left", method="svd"), (WIDE,)),
    ("polar_qdwh", lambda la: la.polar, (G3,)),
    ("polar_qdwh_left", lambda la: lambda a: la.polar(a, side="left"), (WIDE,)),
    ("schur", lambda la: la.schur, (G3,)),
    (
        "solve_sylvester",
        lambda la: la.solve_sylvester,
        (G3[:2, :2], A3 + 2 * np.eye(3, dtype=np.float32), WIDE),
    ),
    ("qr_multiply", lambda la: la.qr_multiply, (np.ascontiguousarray(WIDE.T), F3)),
    (
        "qr_multiply_left",
        lambda la: lambda a, c: la.qr_multiply(a, c, mode="left"),
        (np.ascontiguousarray(WIDE.T), np.eye(2, 3, dtype=np.float32)),
    ),
    (
        "qr_multiply_conjugate",
        lambda la: lambda a, c: la.qr_multiply(a, c, conjugate=True),
        (G3, np.ones((2, 3), np.float32)),
    ),
    ("schur_complex", lambda la: lambda a: la.schur(a, output="complex"), (G3,)),
    ("hessenberg", lambda la: lambda a: la.hessenberg(a, calc_q=True), (G3,)),
    ("sqrtm", lambda la: la.sqrtm, (G3 @ G3.T / 10 + np.eye(3, dtype=np.float32),)),
    (
        "eigh_tridiagonal",
        lambda la: lambda d, e: la.eigh_tridiagonal(d, e, eigvals_only=True),
        (D20, E19),
    ),
    ("toeplitz", lambda la: la.toeplitz, (F3, F4)),
    ("hankel", lambda la: la.hankel, (F3, F4)),
    ("circulant", lambda la: la.circulant, (F4,)),
    ("leslie", lambda la: la.leslie, (F4, F3)),
    ("companion", lambda la: la.companion, (F4,)),
    ("fiedler", lambda la: la.fiedler, (F4,)),
    ("fiedler_companion", lambda la: la.fiedler_companion, (np.arange(6, dtype=np.float32) + 1,)),
    ("convolution_matrix", lambda la: lambda a: la.convolution_matrix(a, 4, "same"), (F3,)),
    ("hilbert", lambda la: lambda: la.hilbert(4), ()),
    ("invhilbert", lambda la: lambda: la.invhilbert(4), ()),
    ("pascal", lambda la: lambda: la.pascal(4), ()),
    ("invpascal", lambda la: lambda: la.invpascal(4, "lower"), ()),
    ("helmert", lambda la: lambda: la.helmert(4, full=True), ()),
    ("hadamard", lambda la: lambda: la.hadamard(8), ()),
    ("dft", lambda la: lambda: la.dft(4, "sqrtn"), ()),
]

# XLA compiles expm's Pade switch and squaring scan, and the bisection loop, for several
# seconds: those cases, and the slower builders, run in the `slow` session only.
DEFAULT = {
    "schur",
    "hessenberg",
    "hankel",
    "convolution_matrix",
    "helmert",
    "hilbert",
    "hadamard",
    "dft",
    "fiedler",
}


def _compare(got: Any, want: Any, rtol: float) -> None:
    got_leaves = jax.tree_util.tree_leaves(got)
    want_leaves = jax.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        scale = max(1.0, float(np.abs(w).max()))
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * scale)


@pytest.mark.parametrize(
    ("name", "fn", "args"),
    [pytest.param(*c, marks=[] if c[0] in DEFAULT else [pytest.mark.slow], id=c[0]) for c in CASES],
)
def test_values_eager_and_jit_on_xla(
    name: str, fn: Callable[[Any], Callable[..., Any]], args: tuple[Any, ...]
) -> None:
    ours = fn(lamina.scipy.linalg)
    theirs = fn(jax.scipy.linalg)
    want = jax.jit(theirs)(*args)
    _compare(ours(*args), want, rtol=2e-5)
    _compare(lamina.jit(ours)(*args), want, rtol=2e-5)


def _loss(la: Any) -> Callable[[Any], Any]:
    weights = np.arange(9, dtype=np.float32).reshape(3, 3) / 9 - 0.4
    return lambda a: (la.expm(a) * weights).sum()


@pytest.mark.slow
@pytest.mark.parametrize("scale", [0.3, 4.0], ids=["pade", "squarings"])
def test_expm_grad_matches_jax_and_finite_differences(scale: float) -> None:
    a = G3 * scale / 4
    got = np.asarray(lamina.grad(_loss(lamina.scipy.linalg))(a))
    want = np.asarray(jax.grad(_loss(jax.scipy.linalg))(a))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
    with lamina.enable_x64(True):
        a64 = a.astype(np.float64)
        loss64 = _loss(lamina.scipy.linalg)
        grad64 = np.asarray(lamina.grad(loss64)(a64))
        eps = 1e-6
        fd = np.zeros_like(a64)
        for i in range(3):
            for j in range(3):
                bump = np.zeros_like(a64)
                bump[i, j] = eps
                fd[i, j] = (float(loss64(a64 + bump)) - float(loss64(a64 - bump))) / (2 * eps)
    np.testing.assert_allclose(grad64, fd, rtol=1e-5, atol=1e-6 * np.abs(fd).max())


@pytest.mark.slow
def test_expm_jvp_jit_matches_expm_frechet() -> None:
    primal, tangent = lamina.jit(lambda a, e: lamina.jvp(lamina.scipy.linalg.expm, (a,), (e,)))(
        A3, G3
    )
    expm_a, frechet = lamina.scipy.linalg.expm_frechet(A3, G3)
    _compare((primal, tangent), (expm_a, frechet), rtol=1e-5)


@pytest.mark.slow
def test_expm_vmap_matches_loop() -> None:
    batch = np.stack([A3, G3 * 0.3, -A3 * 5])
    got = np.asarray(lamina.vmap(lamina.scipy.linalg.expm)(batch))
    loop = np.stack([np.asarray(lamina.scipy.linalg.expm(b)) for b in batch])
    np.testing.assert_allclose(got, loop, rtol=1e-5, atol=1e-5)


@pytest.mark.slow
def test_toeplitz_and_tridiagonal_vmap_match_loop() -> None:
    columns = np.stack([F3, F3 * 2, -F3])
    got = np.asarray(lamina.vmap(lambda c: lamina.scipy.linalg.toeplitz(c, F4))(columns))
    loop = np.stack([np.asarray(lamina.scipy.linalg.toeplitz(c, F4)) for c in columns])
    np.testing.assert_array_equal(got, loop)
    diagonals = np.stack([D20, D20 * 0.5])

    def eigvals(d: Any) -> Any:
        return lamina.scipy.linalg.eigh_tridiagonal(d, E19, eigvals_only=True)

    got = np.asarray(lamina.vmap(eigvals)(diagonals))
    loop = np.stack([np.asarray(eigvals(d)) for d in diagonals])
    np.testing.assert_allclose(got, loop, rtol=1e-6, atol=1e-6)


def test_rsf2csf_of_schur_on_xla() -> None:
    a = np.array([[1.0, 2.0, -3.0], [5.0, 4.0, 2.0], [3.0, -2.0, 1.0]], np.float32)
    la = lamina.scipy.linalg
    want = jax.jit(lambda x: jax.scipy.linalg.rsf2csf(*jax.scipy.linalg.schur(x)))(a)
    _compare(la.rsf2csf(*la.schur(a)), want, rtol=1e-5)
    _compare(lamina.jit(lambda x: la.rsf2csf(*la.schur(x)))(a), want, rtol=1e-5)


def test_funm_on_xla_matches_jax() -> None:
    import jax.numpy

    a = np.array([[1.0, 2.0, -3.0], [5.0, 4.0, 2.0], [3.0, -2.0, 1.0]], np.float32) * 0.3
    want = jax.scipy.linalg.funm(a, jax.numpy.sin, disp=False)
    _compare(lamina.scipy.linalg.funm(a, lamina.numpy.sin, disp=False), want, rtol=1e-5)
