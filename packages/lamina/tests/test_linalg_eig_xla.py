"""`lax.linalg`'s `eig`, `hessenberg`, `tridiagonal`, `schur` and `tridiagonal_solve`, and
`lamina.numpy`'s `linalg.eig`, `linalg.eigvals`, `roots` and `polyfit` on XLA against JAX 0.10.2:
the lowered module text equals `jax.jit(f).lower(...).as_text()` (LAPACK `geev`, `gehrd`,
`sytrd`/`hetrd`, `gees` and `gtsv` FFI custom calls with JAX's attributes and layouts), and
jitted and eager programs compute JAX's numbers as the same LAPACK kernels run (eigenvectors
and Schur vectors included); derivatives and vmap as JAX's."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import jax
import numpy as np
import pytest
from jax._src import config as jax_config

import lamina
import lamina.lax.linalg
import lamina.numpy.linalg
from lamina_core.testing import sweep

pytestmark = pytest.mark.oracle

Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]

_rng = np.random.default_rng(29)


def _general(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    x = _rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * _rng.standard_normal(shape)
    return x.astype(dtype)


def _api(jnp: ModuleType) -> ModuleType:
    return lamina if jnp is lamina.numpy else jax


def _tridiagonal(*batch: int, m: int, k: int, dtype: Any = np.float32) -> tuple[np.ndarray, ...]:
    dl, du = _general(*batch, m, dtype=dtype), _general(*batch, m, dtype=dtype)
    d = (_general(*batch, m, dtype=dtype) + 4).astype(dtype)
    dl[..., 0] = 0
    du[..., -1] = 0
    return dl, d, du, _general(*batch, m, k, dtype=dtype)


A, AB, AC = _general(4, 4), _general(2, 3, 3), _general(2, 3, 3, dtype=np.complex64)
NAN = np.full((2, 2), np.nan, np.float32)
TS, TSB, TSC = (
    _tridiagonal(m=4, k=2),
    _tridiagonal(2, m=5, k=3),
    _tridiagonal(m=3, k=1, dtype=np.complex64),
)
SINGULAR = (
    np.zeros(3, np.float32),
    np.zeros(3, np.float32),
    np.zeros(3, np.float32),
    np.ones((3, 1), np.float32),
)
P = np.array([0.0, 1.0, -6.0, 11.0, -6.0], np.float32)
XS = np.linspace(-1.0, 2.0, 9).astype(np.float32)
YS = np.stack([XS**3 - XS, np.cos(XS)], axis=1).astype(np.float32)

_R = np.linalg.cholesky(A @ A.T + np.eye(4, dtype=np.float32)).T.astype(np.float32)

PROGRAMS: dict[str, tuple[Program, tuple[Any, ...]]] = {
    "ormqr": (lambda jnp, lax: lax.linalg.ormqr, (A[:, :3], A[0, :3], _general(4, 2))),
    "ormqr_right_transposed": (
        lambda jnp, lax: lambda h, t, c: lax.linalg.ormqr(h, t, c, left=False, transpose=True),
        (AB, AB[:, 0], AB),
    ),
    "unmqr": (lambda jnp, lax: lax.linalg.ormqr, (AC, AC[:, 0], AC)),
    "symmetric_product": (
        lambda jnp, lax: (
            lambda a, c: lax.linalg.symmetric_product(
                a, c, alpha=2.0, beta=0.5, symmetrize_output=True
            )
        ),
        (AB, AB),
    ),
    "cholesky_update": (lambda jnp, lax: lax.linalg.cholesky_update, (_R, A[0])),
    "qdwh": (lambda jnp, lax: lax.linalg.qdwh, (_general(5, 3),)),
    "qdwh_dynamic_shape": (
        lambda jnp, lax: lambda x: lax.linalg.qdwh(x, dynamic_shape=(4, 3)),
        (_general(5, 4),),
    ),
    "eig": (lambda jnp, lax: lax.linalg.eig, (A,)),
    "eig_batched_right": (
        lambda jnp, lax: lambda x: lax.linalg.eig(x, compute_left_eigenvectors=False),
        (AB,),
    ),
    "eig_complex": (lambda jnp, lax: lax.linalg.eig, (AC,)),
    "eig_values_only": (
        lambda jnp, lax: (
            lambda x: lax.linalg.eig(
                x, compute_left_eigenvectors=False, compute_right_eigenvectors=False
            )
        ),
        (AC,),
    ),
    "eig_nan": (lambda jnp, lax: lax.linalg.eig, (NAN,)),
    "eig_empty": (lambda jnp, lax: lax.linalg.eig, (np.zeros((2, 0, 0), np.float32),)),
    "numpy_eigvals": (lambda jnp, lax: jnp.linalg.eigvals, (AB,)),
    "numpy_eigvals_int": (
        lambda jnp, lax: jnp.linalg.eigvals,
        (np.arange(9, dtype=np.int32).reshape(3, 3),),
    ),
    "numpy_eig": (lambda jnp, lax: lambda x: tuple(jnp.linalg.eig(x)), (AC,)),
    "numpy_poly_matrix": (lambda jnp, lax: jnp.poly, (A,)),
    "roots_nan_for_zeros": (lambda jnp, lax: lambda p: jnp.roots(p, strip_zeros=False), (P,)),
    "polyfit": (lambda jnp, lax: lambda x, y: jnp.polyfit(x, y, 3), (XS, YS)),
    "polyfit_full": (lambda jnp, lax: lambda x, y: jnp.polyfit(x, y[:, 0], 2, full=True), (XS, YS)),
    "polyfit_cov_weighted": (
        lambda jnp, lax: lambda x, y: jnp.polyfit(x, y, 2, w=x + 2, cov=True),
        (XS, YS),
    ),
    "grad_eigvals": (
        lambda jnp, lax: _api(jnp).grad(lambda x: jnp.real(jnp.linalg.eigvals(x)).sum()),
        (A,),
    ),
    "jvp_eig_vectors": (
        lambda jnp, lax: (
            lambda x, t: _api(jnp).jvp(
                lambda a: lax.linalg.eig(a, enable_eigvec_derivs=True), (x,), (t,)
            )
        ),
        (AC[0], AC[1]),
    ),
    "vmap_eig": (lambda jnp, lax: _api(jnp).vmap(lax.linalg.eig, 2), (np.moveaxis(AB, 0, 2),)),
    "hessenberg": (lambda jnp, lax: lax.linalg.hessenberg, (A,)),
    "hessenberg_complex_batched": (lambda jnp, lax: lax.linalg.hessenberg, (AC,)),
    "tridiagonal": (lambda jnp, lax: lax.linalg.tridiagonal, (AB,)),
    "tridiagonal_upper_complex": (
        lambda jnp, lax: lambda x: lax.linalg.tridiagonal(x, lower=False),
        (AC,),
    ),
    "schur": (lambda jnp, lax: lax.linalg.schur, (A,)),
    "schur_complex_form_only": (
        lambda jnp, lax: lambda x: lax.linalg.schur(x, compute_schur_vectors=False),
        (AC,),
    ),
    "tridiagonal_solve": (lambda jnp, lax: lax.linalg.tridiagonal_solve, TS),
    "tridiagonal_solve_batched": (lambda jnp, lax: lax.linalg.tridiagonal_solve, TSB),
    "tridiagonal_solve_complex": (lambda jnp, lax: lax.linalg.tridiagonal_solve, TSC),
    "tridiagonal_solve_singular": (lambda jnp, lax: lax.linalg.tridiagonal_solve, SINGULAR),
    "tridiagonal_solve_perturbed": (
        lambda jnp, lax: lambda *a: lax.linalg.tridiagonal_solve(*a, perturb_singular=True),
        SINGULAR,
    ),
    "grad_tridiagonal_solve": (
        lambda jnp, lax: _api(jnp).grad(
            lambda *a: (lax.linalg.tridiagonal_solve(*a) ** 2).sum(), argnums=(0, 1, 2, 3)
        ),
        TSB,
    ),
    "vmap_tridiagonal_solve_b": (
        lambda jnp, lax: _api(jnp).vmap(lax.linalg.tridiagonal_solve, (None, None, None, 2)),
        (*TS[:3], _general(4, 2, 3)),
    ),
}


@pytest.fixture(autouse=True)
def _literal_constants() -> Iterator[None]:
    # Lamina stages constants as literals: JAX's modules match with its simplified form.
    with jax_config.use_simplified_jaxpr_constants(True):
        yield


def _equal(got: Any, want: Any) -> None:
    got_leaves, want_leaves = jax.tree.leaves(got), jax.tree.leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.dtype, w.dtype)
        scale = max(1.0, float(np.nanmax(np.abs(w), initial=0.0)))
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5 * scale)


def _both(case: tuple[Program, tuple[Any, ...]]) -> tuple[Any, Any, tuple[Any, ...]]:
    program, args = case
    return program(lamina.numpy, lamina.lax), program(jax.numpy, jax.lax), args


# Programs whose jnp building blocks (`vander`, `diag`, `roll`, `convolve`, `norm`, the `lu`
# permutation loop) stage other (equivalent) equations in Lamina: their numbers are compared,
# not the module text.
VALUES_ONLY = {
    "qdwh",
    "qdwh_dynamic_shape",
    "numpy_poly_matrix",
    "roots_nan_for_zeros",
    "polyfit",
    "polyfit_full",
    "polyfit_cov_weighted",
    "grad_eigvals",
    "jvp_eig_vectors",
}


@pytest.mark.parametrize("case", sweep(sorted(PROGRAMS), sorted(PROGRAMS), unpack=False))
def test_lowering_is_jaxs_and_runs_as_jax(case: str) -> None:
    ours, theirs, args = _both(PROGRAMS[case])
    if case not in VALUES_ONLY:
        text = lamina.jit(ours).lower(*args).as_text()
        want = jax.jit(theirs).lower(*args).as_text()
        text, want = (re.sub(r' \{jax.result_info = "[^"]*"\}', "", t) for t in (text, want))
        assert text == want, f"\n--- lamina ---\n{text}\n--- jax ---\n{want}"
    expected = jax.jit(theirs)(*args)
    _equal(lamina.jit(ours)(*args), expected)
    _equal(ours(*args), expected)


def test_roots_strip_zeros_eagerly() -> None:
    for p in (P, np.array([0.0, 0.0], np.float32), np.array([3.0], np.float32)):
        _equal(lamina.numpy.roots(p), jax.numpy.roots(p))


def test_public_modules() -> None:
    names = {"eig", "eig_p", "hessenberg", "hessenberg_p", "schur", "schur_p", "tridiagonal"}
    names |= {"tridiagonal_p", "tridiagonal_solve", "tridiagonal_solve_p", "SvdAlgorithm"}
    names |= {"EigImplementation", "EighImplementation", "qdwh", "ormqr", "ormqr_p"}
    names |= {"symmetric_product", "symmetric_product_p", "cholesky_update", "cholesky_update_p"}
    assert names <= set(lamina.lax.linalg.__all__)
    assert set(lamina.lax.linalg.__all__) <= set(dir(jax.lax.linalg))
    assert {"eig", "eigvals", "EigResult"} <= set(lamina.numpy.linalg.__all__)
    assert {"roots", "polyfit"} <= set(dir(lamina.numpy))
    assert lamina.lax.linalg.EigImplementation.LAPACK.value == "lapack"


SWEEP_DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


@pytest.mark.slow
@pytest.mark.parametrize("dtype", SWEEP_DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (5, 5), (2, 3, 4, 4)])
def test_every_dtype(dtype: Any, shape: tuple[int, ...]) -> None:
    from lamina_core.config._config import config

    with config(jax_enable_x64=True), jax_config.enable_x64(True):
        x = _general(*shape, dtype=dtype)
        programs: list[Callable[[ModuleType], Callable[..., Any]]] = [
            lambda lax: lax.linalg.eig,
            lambda lax: lax.linalg.hessenberg,
            lambda lax: lax.linalg.tridiagonal,
            lambda lax: lax.linalg.schur,
            lambda lax: (
                lambda a: lax.linalg.tridiagonal_solve(a[..., 0], a[..., 1] + 4, a[..., 0], a)
            ),
        ]
        for program in programs:
            ours, theirs = program(lamina.lax), program(jax.lax)
            text = lamina.jit(ours).lower(x).as_text()
            assert text == jax.jit(theirs).lower(x).as_text()
            _equal(lamina.jit(ours)(x), jax.jit(theirs)(x))
