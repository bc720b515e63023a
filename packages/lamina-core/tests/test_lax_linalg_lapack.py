"""`lax.linalg`'s `cholesky`, `triangular_solve`, `lu` and `lu_pivots_to_permutation`, and
`numpy.linalg`'s `cholesky`, `det` and `slogdet`, against JAX 0.10.2: values (Lamina's NumPy
references against JAX's LAPACK kernels, batched, f32/f64/c64), printed jaxprs of the functions
and of their jvp, grad and vmap, finite differences, vmap against a Python loop, and JAX's
errors."""

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
jnl = jax.numpy.linalg
lnl = lc.numpy.linalg

_rng = np.random.default_rng(7)
_SLOW = pytest.mark.slow


def _general(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    x = _rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * _rng.standard_normal(shape)
    return x.astype(dtype)


def _spd(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    """Well-conditioned Hermitian positive definite matrices."""
    x = _general(*shape, dtype=dtype)
    n = shape[-1]
    out: np.ndarray = (x @ np.conj(np.swapaxes(x, -1, -2)) + n * np.eye(n)).astype(dtype)
    return out


def _triangular(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    """Matrices whose triangles are both well conditioned (a dominant diagonal)."""
    n = shape[-1]
    return (_general(*shape, dtype=dtype) + 3 * n * np.eye(n)).astype(dtype)


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


def _solve(**kw: Any) -> tuple[Callable[..., Any], Callable[..., Any]]:
    return (
        lambda a, b: ll.triangular_solve(a, b, **kw),
        lambda a, b: jl.triangular_solve(a, b, **kw),
    )


TS_FLAGS = [
    dict(left_side=True, lower=True),
    dict(left_side=False, lower=False, transpose_a=True),
    dict(left_side=True, lower=False, transpose_a=True, conjugate_a=True, unit_diagonal=True),
    dict(left_side=False, lower=True, conjugate_a=True),
]
TS_SWEEP = [
    dict(left_side=ls, lower=lo, transpose_a=ta, conjugate_a=ca, unit_diagonal=ud)
    for ls in (False, True)
    for lo in (False, True)
    for ta in (False, True)
    for ca in (False, True)
    for ud in (False, True)
]


# --- values -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("shape", [(3, 3), pytest.param((2, 4, 4), marks=_SLOW)])
def test_cholesky_values(dtype: Any, shape: tuple[int, ...]) -> None:
    a = _spd(*shape, dtype=dtype)
    _close(ll.cholesky(a), jax.jit(jl.cholesky)(a))
    _close(
        ll.cholesky(a, symmetrize_input=False),
        jax.jit(jl.cholesky, static_argnames="symmetrize_input")(a, symmetrize_input=False),
    )


def test_cholesky_of_a_matrix_not_positive_definite_is_nan() -> None:
    a = np.stack([_spd(3, 3), -np.eye(3, dtype=np.float32)])
    got, want = np.asarray(ll.cholesky(a)), np.asarray(jax.jit(jl.cholesky)(a))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(got[1][np.tril_indices(3)]).all() and not np.isnan(got[0]).any()


# Both dtypes of a square matrix, wide, tall and empty matrices in float32 by default; the
# rest with the slow tests.
@pytest.mark.parametrize(
    ("shape", "dtype"),
    [
        pytest.param(s, d, marks=() if d is np.float32 or s == (4, 4) else _SLOW)
        for s in [(4, 4), (3, 5), (5, 3), (2, 3, 4, 4), (0, 0)]
        for d in [np.float32, np.complex64]
    ],
)
def test_lu_values(dtype: Any, shape: tuple[int, ...]) -> None:
    a = _general(*shape, dtype=dtype)
    _close(ll.lu(a), jax.jit(jl.lu)(a))


def test_lu_of_singular_matrices_pivots_as_getrf() -> None:
    a = np.array([[0.0, 0.0, 1.0], [0.0, 2.0, 2.0], [0.0, 1.0, 3.0]], np.float32)
    _close(ll.lu(a), jax.jit(jl.lu)(a))
    ties = np.array([[1.0, 2.0], [-1.0, 5.0]], np.float32)
    _close(ll.lu(ties), jax.jit(jl.lu)(ties))


# Every flag set in complex64 (where `conjugate_a` matters), float32 with the first only.
@pytest.mark.parametrize(
    ("kw", "dtype"),
    [
        pytest.param(kw, d, marks=() if d is np.complex64 or i == 0 else _SLOW)
        for i, kw in enumerate(TS_FLAGS)
        for d in [np.float32, np.complex64]
    ],
)
def test_triangular_solve_values(kw: dict[str, bool], dtype: Any) -> None:
    a = _triangular(2, 4, 4, dtype=dtype)
    b = _general(2, 4, 3, dtype=dtype) if kw["left_side"] else _general(2, 3, 4, dtype=dtype)
    ours, theirs = _solve(**kw)
    _close(ours(a, b), jax.jit(theirs)(a, b))
    vector = b[..., 0] if kw["left_side"] else b[..., 0, :]
    _close(ours(a, vector), jax.jit(theirs)(a, vector))


@pytest.mark.slow
@pytest.mark.parametrize("kw", TS_SWEEP)
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_triangular_solve_values_every_flag(kw: dict[str, bool], dtype: Any) -> None:
    a = _triangular(3, 3, dtype=dtype)
    b = _general(3, 2, dtype=dtype) if kw["left_side"] else _general(2, 3, dtype=dtype)
    ours, theirs = _solve(**kw)
    _close(ours(a, b), theirs(a, b))


def test_lu_pivots_to_permutation_values() -> None:
    pivots = np.array([[2, 2, 3], [1, 4, 2], [0, 1, 2]], np.int32)
    _close(
        ll.lu_pivots_to_permutation(pivots, 5),
        jax.jit(jl.lu_pivots_to_permutation, static_argnums=1)(pivots, 5),
    )
    empty = np.zeros((2, 0), np.int32)
    _close(ll.lu_pivots_to_permutation(empty, 3), jl.lu_pivots_to_permutation(empty, 3))


def test_float64_values_are_jaxs(x64: None) -> None:
    a, b = _spd(2, 4, 4, dtype=np.float64), _general(2, 4, 3, dtype=np.float64)
    _close(ll.cholesky(a), jax.jit(jl.cholesky)(a), 1e-12)
    _close(ll.lu(a), jax.jit(jl.lu)(a), 1e-12)
    ours, theirs = _solve(left_side=True, lower=True)
    _close(ours(a, b), jax.jit(theirs)(a, b), 1e-12)
    _close(lnl.slogdet(a), jnl.slogdet(a), 1e-12)
    _close(lnl.det(a), jnl.det(a), 1e-12)


# --- printed jaxprs ---------------------------------------------------------------------------


def test_functions_print_as_jax() -> None:
    a, ab = _spd(3, 3), _spd(2, 3, 3)
    _same_jaxpr(ll.cholesky, jl.cholesky, a)
    _same_jaxpr(ll.cholesky, jl.cholesky, _spd(2, 3, 3, dtype=np.complex64))
    _same_jaxpr(
        lambda x: ll.cholesky(x, symmetrize_input=False),
        lambda x: jl.cholesky(x, symmetrize_input=False),
        ab,
    )
    _same_jaxpr(ll.lu, jl.lu, _general(2, 3, 5))
    c = ab.astype(np.complex64)
    _same_jaxpr(*_solve(left_side=True, conjugate_a=True), c, c[..., 0])
    _same_jaxpr(*_solve(transpose_a=True, conjugate_a=True), a, a)
    _same_jaxpr(
        lambda p: ll.lu_pivots_to_permutation(p, 4),
        lambda p: jl.lu_pivots_to_permutation(p, 4),
        np.zeros((2, 3), np.int32),
    )


@pytest.mark.parametrize("shape", [pytest.param((3, 3), marks=_SLOW), (2, 3, 3)])
def test_jvps_print_as_jax(shape: tuple[int, ...]) -> None:
    a, t = _spd(*shape), _general(*shape)
    _same_jaxpr(
        lambda x, t: lc.jvp(ll.cholesky, (x,), (t,)),
        lambda x, t: jax.jvp(jl.cholesky, (x,), (t,)),
        a,
        t,
    )
    _same_jaxpr(
        lambda x, t: lc.jvp(ll.lu, (x,), (t,)), lambda x, t: jax.jvp(jl.lu, (x,), (t,)), a, t
    )
    for kw in TS_FLAGS:
        ours, theirs = _solve(**kw)
        _same_jaxpr(
            lambda a, b, ours=ours: lc.jvp(ours, (a, b), (b, a)),
            lambda a, b, theirs=theirs: jax.jvp(theirs, (a, b), (b, a)),
            a,
            t,
        )


def test_float64_jaxprs_print_as_jax(x64: None) -> None:
    a, t = _spd(2, 3, 3, dtype=np.float64), _general(2, 3, 3, dtype=np.float64)
    _same_jaxpr(ll.cholesky, jl.cholesky, a)
    _same_jaxpr(
        lambda x, t: lc.jvp(ll.cholesky, (x,), (t,)),
        lambda x, t: jax.jvp(jl.cholesky, (x,), (t,)),
        a,
        t,
    )
    _same_jaxpr(
        lambda x, t: lc.jvp(ll.lu, (x,), (t,)), lambda x, t: jax.jvp(jl.lu, (x,), (t,)), a, t
    )
    ours, theirs = _solve(left_side=True, lower=True, unit_diagonal=True)
    _same_jaxpr(
        lambda a, b: lc.jvp(ours, (a, b), (b, a)),
        lambda a, b: jax.jvp(theirs, (a, b), (b, a)),
        a,
        t,
    )
    _same_jaxpr(lnl.cholesky, jnl.cholesky, a)
    _same_jaxpr(lnl.det, jnl.det, a)


def test_lu_jvp_of_wide_and_tall_matrices_prints_as_jax() -> None:
    for shape in [(3, 5), (5, 3)]:
        a, t = _general(*shape), _general(*shape)
        _same_jaxpr(
            lambda x, t: lc.jvp(ll.lu, (x,), (t,)), lambda x, t: jax.jvp(jl.lu, (x,), (t,)), a, t
        )


def test_grads_print_as_jax() -> None:
    a, b = _triangular(2, 3, 3), _general(2, 3, 2)

    def loss(solve: Callable[..., Any]) -> Callable[..., Any]:
        return lambda a, b: (solve(a, b) ** 2).sum()

    ours, theirs = _solve(left_side=True, lower=True, transpose_a=True)
    _same_jaxpr(lc.grad(loss(ours), (0, 1)), jax.grad(loss(theirs), (0, 1)), a, b)
    _same_jaxpr(
        lc.grad(lambda x: (ll.cholesky(x) ** 2).sum()),
        jax.grad(lambda x: (jl.cholesky(x) ** 2).sum()),
        _spd(3, 3),
    )
    _same_jaxpr(
        lc.grad(lambda x: (ll.lu(x)[0] ** 2).sum()),
        jax.grad(lambda x: (jl.lu(x)[0] ** 2).sum()),
        _general(2, 3, 3),
    )


def test_vmaps_print_as_jax() -> None:
    a, ab = _triangular(3, 3), _triangular(2, 3, 3)
    _same_jaxpr(lc.vmap(ll.cholesky), jax.vmap(jl.cholesky), _spd(2, 3, 3))
    _same_jaxpr(lc.vmap(ll.lu, in_axes=1), jax.vmap(jl.lu, in_axes=1), _general(3, 2, 3))
    for kw in TS_FLAGS:
        ours, theirs = _solve(**kw)
        for axes, args in [
            ((None, 0), (a, ab)),
            ((0, None), (ab, a)),
            ((2, 0), (np.moveaxis(ab, 0, 2), ab)),
        ]:
            _same_jaxpr(lc.vmap(ours, axes), jax.vmap(theirs, axes), *args)
    _same_jaxpr(
        lc.vmap(lambda p: ll.lu_pivots_to_permutation(p, 4)),
        jax.vmap(lambda p: jl.lu_pivots_to_permutation(p, 4)),
        np.zeros((2, 3), np.int32),
    )


# --- derivatives and batching numerically -----------------------------------------------------


def test_derivatives_match_jax() -> None:
    a, b = _triangular(2, 3, 3), _general(2, 3, 2)
    ours, theirs = _solve(left_side=True, lower=True)
    _close(
        lc.grad(lambda a, b: (ours(a, b) ** 2).sum(), (0, 1))(a, b),
        jax.jit(jax.grad(lambda a, b: (theirs(a, b) ** 2).sum(), (0, 1)))(a, b),
    )
    s, t = _spd(3, 3), _general(3, 3)
    _close(
        lc.jvp(ll.cholesky, (s,), (t,)),
        jax.jit(lambda s, t: jax.jvp(jl.cholesky, (s,), (t,)))(s, t),
    )
    g = _general(2, 4, 4)
    _close(lc.jvp(ll.lu, (g,), (g,))[1][0], jax.jit(lambda g: jax.jvp(jl.lu, (g,), (g,))[1][0])(g))


@pytest.mark.parametrize(
    "kw", [pytest.param(kw, marks=() if i in (0, 2) else _SLOW) for i, kw in enumerate(TS_FLAGS)]
)
def test_triangular_solve_finite_differences(kw: dict[str, bool], x64: None) -> None:
    a = _triangular(3, 3, dtype=np.float64)
    b = _general(3, 2, dtype=np.float64) if kw["left_side"] else _general(2, 3, dtype=np.float64)
    ours, _ = _solve(**kw)
    check_grads(ours, (a, b), order=2, modes=("fwd", "rev"))


def test_cholesky_and_lu_finite_differences(x64: None) -> None:
    s = _spd(2, 3, 3, dtype=np.float64)
    check_grads(ll.cholesky, (s,), order=1, modes=("fwd", "rev"))
    check_grads(ll.cholesky, (s[0],), order=2, modes=("fwd",))
    g = _general(4, 4, dtype=np.float64)
    check_grads(lambda x: ll.lu(x)[0], (g,), order=1, modes=("fwd", "rev"))
    check_grads(lambda x: ll.lu(x)[0], (_general(3, 5, dtype=np.float64),), order=1)


def test_complex_finite_differences(x64: None) -> None:
    s = _spd(3, 3, dtype=np.complex128)
    check_grads(ll.cholesky, (s,), order=1, modes=("fwd", "rev"))
    a, b = _triangular(3, 3, dtype=np.complex128), _general(3, 2, dtype=np.complex128)
    check_grads(lambda a, b: ll.triangular_solve(a, b, left_side=True, conjugate_a=True), (a, b), 1)


def _loop(f: Callable[..., Any], in_axes: tuple[Any, ...], *args: Any) -> Any:
    size = next(np.shape(x)[ax] for x, ax in zip(args, in_axes, strict=True) if ax is not None)
    outs = []
    for i in range(size):
        sliced = [
            x if ax is None else np.take(x, i, axis=ax) for x, ax in zip(args, in_axes, strict=True)
        ]
        outs.append(jax.tree.leaves(f(*sliced)))
    return [np.stack(col) for col in zip(*outs, strict=True)]


def test_vmap_is_a_python_loop() -> None:
    a, ab = _triangular(3, 3), _triangular(2, 3, 3)
    cases: list[tuple[Callable[..., Any], tuple[Any, ...], tuple[Any, ...]]] = [
        (ll.cholesky, (0,), (_spd(2, 3, 3),)),
        (ll.lu, (1,), (_general(3, 2, 3),)),
        (
            lambda p: ll.lu_pivots_to_permutation(p, 4),
            (0,),
            (np.array([[1, 2, 2], [3, 3, 3]], np.int32),),
        ),
    ]
    for kw in TS_FLAGS:
        ours, _ = _solve(**kw)
        cases += [
            (ours, (None, 0), (a, ab)),
            (ours, (0, None), (ab, a)),
            (ours, (2, 0), (np.moveaxis(ab, 0, 2), ab)),
        ]
    for f, axes, args in cases:
        _close(lc.vmap(f, axes)(*args), _loop(f, axes, *args))


# --- numpy.linalg -----------------------------------------------------------------------------


# A 1x1 and a 3x3 matrix by default, the other sizes with the slow tests.
@pytest.mark.parametrize("n", [1, pytest.param(2, marks=_SLOW), 3, pytest.param(4, marks=_SLOW)])
def test_numpy_det_and_slogdet_values_and_grads(n: int) -> None:
    a = _general(2, n, n) + 2 * np.eye(n, dtype=np.float32)
    _close(lnl.det(a), jnl.det(a))
    _close(lnl.slogdet(a), jnl.slogdet(a))
    _close(
        lc.grad(lambda x: lnl.det(x).sum())(a),
        jax.jit(jax.grad(lambda x: jnl.det(x).sum()))(a),
        1e-3,
    )
    _close(
        lc.grad(lambda x: lnl.slogdet(x)[1].sum())(a),
        jax.jit(jax.grad(lambda x: jnl.slogdet(x)[1].sum()))(a),
        1e-3,
    )
    c = _general(n, n, dtype=np.complex64) + 2 * np.eye(n, dtype=np.complex64)
    _close(lnl.det(c), jnl.det(c))
    _close(lnl.slogdet(c), jnl.slogdet(c))


def test_numpy_det_of_a_rank_deficient_matrix_has_jaxs_gradient() -> None:
    a = np.array([[1.0, 2, 3, 4], [2, 4, 6, 8], [0, 1, 0, 1], [1, 0, 2, 5]], np.float32)
    _close(lc.grad(lnl.det)(a), jax.jit(jax.grad(jnl.det))(a), 1e-3)
    _close(lnl.slogdet(a), jnl.slogdet(a))


def test_numpy_functions_print_as_jax() -> None:
    s = _spd(2, 3, 3)
    _same_jaxpr(lnl.cholesky, jnl.cholesky, s)
    _same_jaxpr(lambda x: lnl.cholesky(x, upper=True), lambda x: jnl.cholesky(x, upper=True), s)
    for n in (2, 3):
        _same_jaxpr(lnl.det, jnl.det, _general(n, n))
        _same_jaxpr(lc.grad(lnl.det), jax.grad(jnl.det), _general(n, n))
    for n in (1, 2):
        _same_jaxpr(lnl.slogdet, jnl.slogdet, _general(2, n, n))
        _same_jaxpr(
            lc.grad(lambda x: lnl.slogdet(x)[1]),
            jax.grad(lambda x: jnl.slogdet(x)[1]),
            _general(n, n),
        )


def test_numpy_cholesky_values() -> None:
    s = _spd(2, 3, 3, dtype=np.complex64)
    _close(lnl.cholesky(s), jnl.cholesky(s))
    _close(lnl.cholesky(s, upper=True), jnl.cholesky(s, upper=True))
    _close(lnl.cholesky(np.eye(2, dtype=np.int32)), jnl.cholesky(np.eye(2, dtype=np.int32)))


def test_numpy_det_finite_differences(x64: None) -> None:
    a = _general(4, 4, dtype=np.float64) + 3 * np.eye(4)
    check_grads(lnl.det, (a,), order=1, modes=("fwd", "rev"))
    check_grads(lambda x: lnl.slogdet(x)[1], (a,), order=1, modes=("fwd", "rev"))


# --- errors -----------------------------------------------------------------------------------


def _same_error(ours: Callable[..., Any], theirs: Callable[..., Any], *args: Any) -> None:
    with pytest.raises(Exception) as want:
        jax.make_jaxpr(theirs)(*args)
    with pytest.raises(type(want.value)) as got:
        lc.make_jaxpr(ours)(*args)
    assert str(got.value) == str(want.value)


def _bind_solve(prim: Any, **kw: Any) -> Callable[..., Any]:
    params = dict(
        left_side=False, lower=False, transpose_a=False, conjugate_a=False, unit_diagonal=False
    )
    params.update(kw)
    return lambda a, b: prim.bind(a, b, **params)


def test_errors_are_jaxs() -> None:
    from jax._src.lax import linalg as jax_linalg

    f32, i32 = np.zeros((3, 3), np.float32), np.zeros((3, 3), np.int32)
    _same_error(ll.cholesky_p.bind, jax_linalg.cholesky_p.bind, i32)
    _same_error(ll.cholesky_p.bind, jax_linalg.cholesky_p.bind, np.zeros((3, 2), np.float32))
    _same_error(ll.lu, jl.lu, np.zeros((3,), np.float32))
    _same_error(ll.lu_p.bind, jax_linalg.lu_p.bind, i32)
    ours, theirs = _bind_solve(ll.triangular_solve_p), _bind_solve(jax_linalg.triangular_solve_p)
    _same_error(ours, theirs, f32, i32)
    _same_error(ours, theirs, f32, f32.astype(np.complex64))
    _same_error(ours, theirs, f32, f32[None])
    _same_error(ours, theirs, f32[:, :2], f32)
    left = _bind_solve(ll.triangular_solve_p, left_side=True)
    _same_error(left, _bind_solve(jax_linalg.triangular_solve_p, left_side=True), f32, f32[:2])
    pivots = np.zeros((3,), np.int32)
    _same_error(
        lambda p: ll.lu_pivots_to_permutation(p, 2),
        lambda p: jl.lu_pivots_to_permutation(p, 2),
        pivots,
    )
    _same_error(
        lambda p: ll.lu_pivots_to_permutation(p, 4),
        lambda p: jl.lu_pivots_to_permutation(p, 4),
        pivots.astype(np.float32),
    )
    _same_error(lnl.slogdet, jnl.slogdet, np.zeros((3, 2), np.float32))
    _same_error(lnl.det, jnl.det, np.zeros((3, 2), np.float32))
