"""`lax.linalg`'s `eigh`, `qr` (with `geqrf`, `householder_product`) and `svd`, and
`numpy.linalg`'s `eigh`, `eigvalsh`, `qr`, `svd`, `svdvals`, `matrix_rank`, `pinv`, `cond` and
the singular-value norms, against JAX 0.10.2: values (Lamina's NumPy references against JAX's
LAPACK kernels; singular vectors of complex matrices up to a phase per column, as NumPy's
LAPACK build may pick another), printed jaxprs of the functions and of their jvp, grad and vmap,
finite differences, vmap against a Python loop, and JAX's errors."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import lamina_core as lc
from lamina_core.config._config import config
from lamina_core.lax import linalg as ll
from lamina_core.testing import check_grads

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.oracle
jl = jax.lax.linalg
jl_private = pytest.importorskip("jax._src.lax.linalg")
jnl = jax.numpy.linalg
lnl = lc.numpy.linalg

_rng = np.random.default_rng(11)
_SLOW = pytest.mark.slow


def _general(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    x = _rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * _rng.standard_normal(shape)
    return x.astype(dtype)


def _hermitian(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    x = _general(*shape, dtype=dtype)
    out: np.ndarray = ((x + np.conj(np.swapaxes(x, -1, -2))) / 2).astype(dtype)
    return out


@pytest.fixture
def x64() -> Iterator[None]:
    from jax._src import config as jax_config

    with config(jax_enable_x64=True), jax_config.enable_x64(True):
        yield


def _same_jaxpr(ours: Callable[..., Any], theirs: Callable[..., Any], *args: Any) -> None:
    got, want = str(lc.make_jaxpr(ours)(*args)), str(jax.make_jaxpr(theirs)(*args))
    assert got == want, f"\n--- lamina ---\n{got}\n--- jax ---\n{want}"


def _close(got: Any, want: Any, tol: float = 1e-4) -> None:
    got_leaves, want_leaves = jax.tree.leaves(got), jax.tree.leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        if w.dtype.kind in "iub":
            np.testing.assert_array_equal(g, w)
        else:
            scale = max(1.0, float(np.max(np.abs(w), initial=0.0)))
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol * scale)


def _same_columns_up_to_phase(got: Any, want: Any, tol: float = 1e-4) -> None:
    """Columns equal up to a unit factor each (the freedom of eigen- and singular vectors)."""
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape and g.dtype == w.dtype
    overlap = np.abs(np.einsum("...ij,...ij->...j", np.conj(g), w))
    np.testing.assert_allclose(overlap, np.ones_like(overlap), atol=tol)


# --- values -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("shape", [(4, 4), pytest.param((2, 3, 3), marks=_SLOW)])
def test_eigh_values(dtype: Any, shape: tuple[int, ...]) -> None:
    x = _general(*shape, dtype=dtype)
    v, w = ll.eigh(x)
    v_want, w_want = jax.jit(jl.eigh)(x)
    _close(w, w_want)
    _same_columns_up_to_phase(v, v_want)
    for lower in (True, False):
        v, w = ll.eigh(x, lower=lower, symmetrize_input=False)
        f = jax.jit(lambda x, lower=lower: jl.eigh(x, lower=lower, symmetrize_input=False))
        v_want, w_want = f(x)
        _close(w, w_want)
        _same_columns_up_to_phase(v, v_want)


QR_SHAPES = [(4, 3), (3, 5), (3, 3), (2, 5, 3), (0, 3), (3, 0)]


# Every shape with full matrices, the reduced ones of a tall and an empty matrix by default.
@pytest.mark.parametrize(
    ("shape", "full_matrices"),
    [
        pytest.param(s, f, marks=() if f or s in [(4, 3), (3, 0)] else _SLOW)
        for s in QR_SHAPES
        for f in [True, False]
    ],
)
def test_qr_values(full_matrices: bool, shape: tuple[int, ...]) -> None:
    x = _general(*shape)
    f = jax.jit(lambda x: jl.qr(x, full_matrices=full_matrices))
    _close(ll.qr(x, full_matrices=full_matrices), f(x))


def test_qr_complex_and_householder_pieces() -> None:
    x = _general(2, 4, 3, dtype=np.complex64)
    _close(ll.qr(x), jax.jit(jl.qr)(x))
    _close(ll.geqrf(x), jax.jit(jl_private.geqrf)(x))
    a, taus = jl_private.geqrf(x)
    _close(ll.householder_product(a, taus), jax.jit(jl.householder_product)(a, taus))


SVD_SHAPES = [(3, 2), (2, 4), (3, 3), (2, 4, 3), (0, 3), (2, 3, 0)]


# Every shape reduced, the full matrices of a tall and an empty matrix by default.
@pytest.mark.parametrize(
    ("shape", "full_matrices"),
    [
        pytest.param(s, f, marks=() if not f or s in [(3, 2), (0, 3)] else _SLOW)
        for s in SVD_SHAPES
        for f in [True, False]
    ],
)
def test_svd_values(full_matrices: bool, shape: tuple[int, ...]) -> None:
    x = _general(*shape)
    f = jax.jit(lambda x: jl.svd(x, full_matrices=full_matrices))
    _close(ll.svd(x, full_matrices=full_matrices), f(x))
    _close(ll.svd(x, compute_uv=False), jax.jit(lambda x: jl.svd(x, compute_uv=False))(x))


def test_svd_complex_values() -> None:
    x = _general(2, 5, 3, dtype=np.complex64)
    u, s, vt = ll.svd(x, full_matrices=False)
    u_want, s_want, vt_want = jax.jit(lambda x: jl.svd(x, full_matrices=False))(x)
    _close(s, s_want)
    _same_columns_up_to_phase(u, u_want)
    _same_columns_up_to_phase(np.swapaxes(vt, -1, -2), np.swapaxes(vt_want, -1, -2))


def _numpy_functions(n: Any, x: Any, xt: Any, h: Any, rank_deficient: Any) -> list[Any]:
    """The `numpy.linalg` decompositions and the functions on them, of module `n`."""
    return [
        n.eigh(h).eigenvalues,
        n.eigvalsh(h, "U"),
        *(n.qr(x, mode) for mode in ("reduced", "complete", "r", "raw")),
        n.svd(x),
        n.svdvals(x),
        n.svd(h, hermitian=True).S,
        n.matrix_rank(rank_deficient),
        n.matrix_rank(x, rtol=0.5),
        n.pinv(x),
        n.pinv(xt),
        n.cond(x),
        n.cond(x, -2),
        *(n.norm(x, ord, axis=(1, 2)) for ord in ("nuc", 2, -2)),
        n.norm(x, 2, axis=(2, 0), keepdims=True),
    ]


def test_numpy_functions_values() -> None:
    x, h = _general(2, 4, 3), _hermitian(4, 4)
    rank_deficient = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)
    args = (x, np.swapaxes(x, -1, -2), h, rank_deficient)
    # JAX's values from one jitted program (one compilation, where each call compiles one).
    wants = jax.jit(lambda *a: _numpy_functions(jnl, *a))(*args)
    gots = _numpy_functions(lnl, *args)
    assert len(gots) == len(wants)
    for got, want in zip(gots, wants, strict=True):
        _close(got, want)


def test_float64_values_are_jaxs(x64: None) -> None:
    x, h = _general(2, 4, 3, dtype=np.float64), _hermitian(2, 3, 3, dtype=np.float64)
    _close(ll.qr(x), jax.jit(jl.qr)(x), 1e-12)
    _close(ll.svd(x), jax.jit(jl.svd)(x), 1e-12)
    _close(ll.eigh(h)[1], jax.jit(jl.eigh)(h)[1], 1e-12)
    _close(lnl.pinv(x), jnl.pinv(x), 1e-12)


# --- printed jaxprs ---------------------------------------------------------------------------


def test_functions_print_as_jax() -> None:
    x, xc = _general(2, 4, 3), _general(3, 5, dtype=np.complex64)
    _same_jaxpr(ll.eigh, jl.eigh, x[:, :3])
    _same_jaxpr(ll.eigh, jl.eigh, xc[:, :3])
    _same_jaxpr(
        lambda x: ll.eigh(x, lower=False, symmetrize_input=False, subset_by_index=(0, 2)),
        lambda x: jl.eigh(x, lower=False, symmetrize_input=False, subset_by_index=(0, 2)),
        x[:, :3],
    )
    for full in (True, False):
        _same_jaxpr(
            lambda x, f=full: ll.qr(x, full_matrices=f),
            lambda x, f=full: jl.qr(x, full_matrices=f),
            x,
        )
        _same_jaxpr(
            lambda x, f=full: ll.svd(x, full_matrices=f),
            lambda x, f=full: jl.svd(x, full_matrices=f),
            xc,
        )
    _same_jaxpr(ll.geqrf, jl_private.geqrf, x)
    a, taus = jl_private.geqrf(x)
    _same_jaxpr(ll.householder_product, jl.householder_product, a, taus)
    _same_jaxpr(lambda x: ll.svd(x, compute_uv=False), lambda x: jl.svd(x, compute_uv=False), x)
    _same_jaxpr(
        lambda x: ll.svd(x, full_matrices=False, subset_by_index=(0, 1)),
        lambda x: jl.svd(x, full_matrices=False, subset_by_index=(0, 1)),
        x,
    )


def _jvp_pair(
    ours: Callable[..., Any], theirs: Callable[..., Any]
) -> tuple[Callable[..., Any], Callable[..., Any]]:
    return (
        lambda x, t: lc.jvp(ours, (x,), (t,)),
        lambda x, t: jax.jvp(theirs, (x,), (t,)),
    )


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("shape", [pytest.param((3, 3), marks=_SLOW), (2, 3, 3)])
def test_eigh_jvp_prints_as_jax(dtype: Any, shape: tuple[int, ...]) -> None:
    x, t = _general(*shape, dtype=dtype), _general(*shape, dtype=dtype)
    _same_jaxpr(*_jvp_pair(ll.eigh, jl.eigh), x, t)


QR_JVP_CASES = [((4, 3), True), ((4, 3), False), ((3, 5), True), ((3, 3), True), ((2, 5, 3), True)]


@pytest.mark.parametrize(
    ("shape", "full"),
    [pytest.param(*c, marks=() if i in (0, 1, 4) else _SLOW) for i, c in enumerate(QR_JVP_CASES)],
)
def test_qr_jvp_prints_as_jax(shape: tuple[int, ...], full: bool) -> None:
    x, t = _general(*shape), _general(*shape)
    ours, theirs = _jvp_pair(
        lambda x: ll.qr(x, full_matrices=full), lambda x: jl.qr(x, full_matrices=full)
    )
    _same_jaxpr(ours, theirs, x, t)


def test_qr_jvp_complex_prints_as_jax() -> None:
    x, t = _general(3, 5, dtype=np.complex64), _general(3, 5, dtype=np.complex64)
    _same_jaxpr(*_jvp_pair(ll.qr, jl.qr), x, t)


SVD_JVP_CASES = [((3, 2), False, True), ((2, 4), False, True), ((2, 3, 3), True, True),
                 ((3, 4), True, False)]  # fmt: skip


# Every case in float32, complex64 with the first only; the rest with the slow tests.
@pytest.mark.parametrize(
    ("shape", "full", "uv", "dtype"),
    [
        pytest.param(*c, d, marks=() if d is np.float32 or i == 0 else _SLOW)
        for i, c in enumerate(SVD_JVP_CASES)
        for d in [np.float32, np.complex64]
    ],
)
def test_svd_jvp_prints_as_jax(shape: tuple[int, ...], full: bool, uv: bool, dtype: Any) -> None:
    x, t = _general(*shape, dtype=dtype), _general(*shape, dtype=dtype)
    ours, theirs = _jvp_pair(
        lambda x: ll.svd(x, full_matrices=full, compute_uv=uv),
        lambda x: jl.svd(x, full_matrices=full, compute_uv=uv),
    )
    _same_jaxpr(ours, theirs, x, t)


def test_grad_and_vmap_print_as_jax() -> None:
    x = _general(2, 4, 3)

    def loss(mod: Any) -> Callable[..., Any]:
        def f(x: Any) -> Any:
            q, r = mod.qr(x, full_matrices=False)
            v, w = mod.eigh(r @ r.T)
            return mod.svd(q, compute_uv=False).sum() + w.sum() + (v**2).sum()

        return f

    _same_jaxpr(lc.grad(loss(ll)), jax.grad(loss(jl)), x[0])
    square = _general(3, 2, 3)
    _same_jaxpr(lc.vmap(ll.eigh, in_axes=1), jax.vmap(jl.eigh, in_axes=1), square)
    _same_jaxpr(lc.vmap(ll.qr, in_axes=2), jax.vmap(jl.qr, in_axes=2), x)
    _same_jaxpr(lc.vmap(ll.svd), jax.vmap(jl.svd), x)


def test_numpy_functions_print_as_jax() -> None:
    x, h = _general(3, 4), _hermitian(3, 3)
    _same_jaxpr(lnl.eigh, jnl.eigh, h)
    _same_jaxpr(lnl.eigvalsh, jnl.eigvalsh, np.eye(3, dtype=np.int32))
    for mode in ("reduced", "complete", "r", "raw"):
        _same_jaxpr(lambda x, m=mode: lnl.qr(x, m), lambda x, m=mode: jnl.qr(x, m), x)
    _same_jaxpr(lnl.svd, jnl.svd, x)
    _same_jaxpr(lnl.svdvals, jnl.svdvals, x)
    _same_jaxpr(lambda x: lnl.svd(x, hermitian=True), lambda x: jnl.svd(x, hermitian=True), h)
    _same_jaxpr(
        lambda x: lnl.svd(x, compute_uv=False, hermitian=True),
        lambda x: jnl.svd(x, compute_uv=False, hermitian=True),
        h,
    )
    _same_jaxpr(lnl.matrix_rank, jnl.matrix_rank, x)
    _same_jaxpr(lnl.pinv, jnl.pinv, x)
    _same_jaxpr(lc.grad(lambda a: lnl.pinv(a).sum()), jax.grad(lambda a: jnl.pinv(a).sum()), x)
    _same_jaxpr(
        lc.grad(lambda a: lnl.pinv(a).sum()), jax.grad(lambda a: jnl.pinv(a).sum()), x.T.copy()
    )
    _same_jaxpr(lnl.cond, jnl.cond, x)
    _same_jaxpr(lambda x: lnl.cond(x, -2), lambda x: jnl.cond(x, -2), x)
    for ord in ("nuc", 2, -2):
        _same_jaxpr(lambda x, o=ord: lnl.norm(x, o), lambda x, o=ord: jnl.norm(x, o), x)


def test_float64_jaxprs_print_as_jax(x64: None) -> None:
    x, t = _general(4, 3, dtype=np.float64), _general(4, 3, dtype=np.float64)
    _same_jaxpr(*_jvp_pair(ll.qr, jl.qr), x, t)
    _same_jaxpr(*_jvp_pair(ll.eigh, jl.eigh), x[:3], t[:3])
    full = False
    _same_jaxpr(
        *_jvp_pair(
            lambda x: ll.svd(x, full_matrices=full), lambda x: jl.svd(x, full_matrices=full)
        ),
        x,
        t,
    )
    _same_jaxpr(lnl.pinv, jnl.pinv, x)


# --- finite differences and vmap against a loop ----------------------------------------------


def test_eigh_finite_differences() -> None:
    with config(jax_enable_x64=True):
        h = _hermitian(3, 3, dtype=np.float64) + np.diag([0.0, 3.0, 6.0])
        check_grads(lambda x: ll.eigh(x)[1], (h,), 1, tol=1e-5)
        # Eigenvectors are defined up to sign: differentiate sign-free products of them.
        check_grads(lambda x: ll.eigh(x)[0] ** 2, (h,), 1, tol=1e-5)


QR_FD_CASES = [
    pytest.param(shape, full, marks=[] if i == 0 else [pytest.mark.slow])
    for i, (shape, full) in enumerate(QR_JVP_CASES)
]


@pytest.mark.parametrize(("shape", "full"), QR_FD_CASES)
def test_qr_finite_differences(shape: tuple[int, ...], full: bool) -> None:
    with config(jax_enable_x64=True):
        x = _general(*shape, dtype=np.float64)
        check_grads(lambda x: ll.qr(x, full_matrices=full), (x,), 1, tol=1e-5)


@pytest.mark.parametrize("shape", [(3, 2), pytest.param((2, 4), marks=pytest.mark.slow), (3, 3)])
def test_svd_finite_differences(shape: tuple[int, ...]) -> None:
    with config(jax_enable_x64=True):
        x = _general(*shape, dtype=np.float64)

        def products(x: Any) -> Any:
            u, s, vt = ll.svd(x, full_matrices=False)
            return s, u @ vt

        check_grads(products, (x,), 1, tol=1e-5)


def test_pinv_finite_differences() -> None:
    with config(jax_enable_x64=True):
        for x in (_general(3, 2, dtype=np.float64), _general(2, 4, dtype=np.float64)):
            check_grads(lnl.pinv, (x,), 1, tol=1e-5)


def test_vmap_matches_a_loop() -> None:
    x = _general(3, 3, 4)
    v, w = lc.vmap(ll.eigh, in_axes=2, out_axes=1)(x)
    for i in range(4):
        v_i, w_i = ll.eigh(x[:, :, i])
        _close(v[:, i], v_i)
        _close(w[:, i], w_i)
    q, r = lc.vmap(ll.qr, in_axes=1)(x)
    for i in range(3):
        _close((q[i], r[i]), ll.qr(x[:, i]))
    u, s, vt = lc.vmap(lambda m: ll.svd(m, full_matrices=False))(x)
    for i in range(3):
        _close((u[i], s[i], vt[i]), ll.svd(x[i], full_matrices=False))


# --- errors -----------------------------------------------------------------------------------


def _same_error(ours: Callable[[], Any], theirs: Callable[[], Any]) -> None:
    with pytest.raises(Exception) as want:
        theirs()
    with pytest.raises(type(want.value)) as got:
        ours()
    assert str(got.value) == str(want.value)


BAD_INPUTS = [np.eye(3, dtype=np.int32), np.ones((3, 4), np.float32), np.ones(3, np.float32)]


@pytest.mark.parametrize("x", BAD_INPUTS, ids=["dtype", "not_square", "rank"])
def test_errors_are_jaxs(x: np.ndarray) -> None:
    _same_error(
        lambda: ll.eigh(x, symmetrize_input=False), lambda: jl.eigh(x, symmetrize_input=False)
    )
    if (x.ndim == 2 and x.shape[0] == x.shape[1]) or x.ndim == 1:
        _same_error(lambda: ll.qr(x), lambda: jl.qr(x))
        _same_error(lambda: ll.svd(x), lambda: jl.svd(x))


def test_more_errors_are_jaxs() -> None:
    x = _general(4, 3)
    _same_error(
        lambda: ll.svd(x, subset_by_index=(0, 1)), lambda: jl.svd(x, subset_by_index=(0, 1))
    )
    _, taus = jl_private.geqrf(x)
    _same_error(
        lambda: ll.householder_product(x.T, taus[:2]),
        lambda: jl.householder_product(x.T, taus[:2]),
    )
    _same_error(
        lambda: ll.householder_product(x[:, :2], taus),
        lambda: jl.householder_product(x[:, :2], taus),
    )
    _same_error(lambda: lc.jvp(ll.svd, (x,), (x,)), lambda: jax.jvp(jl.svd, (x,), (x,)))
    _same_error(lambda: lc.jvp(ll.geqrf, (x,), (x,)), lambda: jax.jvp(jl_private.geqrf, (x,), (x,)))
    h = _hermitian(3, 3)
    _same_error(lambda: lnl.eigh(h, UPLO="X"), lambda: jnl.eigh(h, UPLO="X"))
    _same_error(lambda: lnl.qr(x, "bad"), lambda: jnl.qr(x, "bad"))
    _same_error(lambda: lnl.matrix_rank(x, 1.0, tol=1.0), lambda: jnl.matrix_rank(x, 1.0, tol=1.0))
    _same_error(lambda: lnl.pinv(x, 1.0, rcond=1.0), lambda: jnl.pinv(x, 1.0, rcond=1.0))
    _same_error(lambda: lnl.cond(x[0]), lambda: jnl.cond(x[0]))
    _same_error(lambda: lnl.cond(x[:0]), lambda: jnl.cond(x[:0]))
    with pytest.raises(NotImplementedError):
        ll.eigh(h, subset_by_index=(0, 2))


# --- sweeps -----------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("shape", [(5, 5), (2, 6, 4), (2, 4, 6), (1, 1)])
def test_every_dtype_and_shape(dtype: Any, shape: tuple[int, ...]) -> None:
    from jax._src import config as jax_config

    with config(jax_enable_x64=True), jax_config.enable_x64(True):
        x = _general(*shape, dtype=dtype)
        for full in (True, False):
            qr_f = jax.jit(lambda x, full=full: jl.qr(x, full_matrices=full))
            _close(ll.qr(x, full_matrices=full), qr_f(x))
            u, s, _ = ll.svd(x, full_matrices=full)
            u_w, s_w, _ = jax.jit(lambda x, full=full: jl.svd(x, full_matrices=full))(x)
            _close(s, s_w)
            k = min(shape[-2:])
            _same_columns_up_to_phase(u[..., :k], u_w[..., :k])
        if shape[-1] == shape[-2]:
            v, w = ll.eigh(x)
            v_w, w_w = jax.jit(jl.eigh)(x)
            _close(w, w_w)
            _same_columns_up_to_phase(v, v_w)
            t = _general(*shape, dtype=dtype)
            _same_jaxpr(*_jvp_pair(ll.eigh, jl.eigh), x, t)
            _same_jaxpr(*_jvp_pair(ll.svd, jl.svd), x, t)
        t = _general(*shape, dtype=dtype)
        _same_jaxpr(*_jvp_pair(ll.qr, jl.qr), x, t)
