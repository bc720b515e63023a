"""`jax.scipy.linalg` for Lamina: `block_diag`, and what `lax.linalg`'s Cholesky, LU and
triangular-solve primitives give: cholesky, cho_factor, cho_solve, solve_triangular,
lu_factor, lu and lu_solve; solve (LU, or Cholesky for `assume_a='pos'`, both on
`custom_linear_solve`), inv and det through `jnp.linalg`; qr, svd and eigh on their
primitives; solve_sylvester (Bartels-Stewart on the complex Schur forms, or by
eigendecompositions); all staged as JAX 0.10.2 stages them.

The rest lives in sibling modules and is re-exported here: solve_triangular
(`_linalg_triangular`), the special matrices (`_linalg_special`), expm and expm_frechet
(`_linalg_expm`), polar and eigh_tridiagonal (`_linalg_polar`), qr_multiply (`_linalg_qr`),
and schur, hessenberg, rsf2csf, funm and sqrtm (`_linalg_schur`).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.lax import batched_matvec, check_solve_shapes
from lamina_core.lax import linalg as lax_linalg
from lamina_core.lax import lu_solve as lax_lu_solve
from lamina_core.numpy import (
    at,
    dtype_of,
    promote_args_inexact,
    promote_dtypes,
    promote_dtypes_inexact,
    shape_of,
)
from lamina_core.scipy._linalg_expm import expm, expm_frechet
from lamina_core.scipy._linalg_polar import eigh_tridiagonal, polar
from lamina_core.scipy._linalg_qr import qr_multiply
from lamina_core.scipy._linalg_schur import funm, hessenberg, rsf2csf, schur, sqrtm
from lamina_core.scipy._linalg_special import (
    circulant,
    companion,
    convolution_matrix,
    dft,
    fiedler,
    fiedler_companion,
    hadamard,
    hankel,
    helmert,
    hilbert,
    invhilbert,
    invpascal,
    leslie,
    pascal,
    toeplitz,
)
from lamina_core.scipy._linalg_triangular import solve_signature, solve_triangular
from lamina_core.transforms import Jitted, vmap

Array = Any


@Jitted
def block_diag(*arrs: Any) -> Array:
    """The arrays (at most 2-D; scalars and vectors as rows) laid along a block diagonal."""
    if not arrs:
        arrs = (jnp.zeros((1, 0)),)
    arrs = tuple(promote_dtypes(*arrs))
    too_deep = [i for i, a in enumerate(arrs) if len(shape_of(a)) > 2]
    if too_deep:
        i = too_deep[0]
        raise ValueError(
            "Arguments to jax.scipy.linalg.block_diag must have at most 2 dimensions, "
            f"got {arrs[i]} at argument {i}."
        )
    blocks = [jnp.atleast_2d(a) for a in arrs]
    zero = dtype_of(blocks[0]).type(0)
    total_cols = sum(shape_of(b)[1] for b in blocks)
    padded = []
    col = 0
    for block in blocks:
        cols = shape_of(block)[1]
        padded.append(lax.pad(block, zero, ((0, 0, 0), (col, total_cols - cols - col, 0))))
        col += cols
    return jnp.concatenate(padded, axis=0)


@partial(Jitted, static_argnames=("lower",))
def _cholesky(a: Any, lower: bool) -> Array:
    (a,) = promote_dtypes_inexact(jnp.asarray(a))
    factor = lax_linalg.cholesky(
        a if lower else jnp.conj(jnp.matrix_transpose(a)), symmetrize_input=False
    )
    return factor if lower else jnp.conj(jnp.matrix_transpose(factor))


def cholesky(
    a: Any, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> Array:
    """The Cholesky factor of the Hermitian positive-definite `a`: upper (U^H U = a) unless
    `lower`; only `a`'s triangle on that side is read."""
    del overwrite_a, check_finite
    return _cholesky(a, lower)


def cho_factor(
    a: Any, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> tuple[Array, bool]:
    """(cholesky(a, lower), lower), the input `cho_solve` takes."""
    del overwrite_a, check_finite
    return cholesky(a, lower=lower), lower


@partial(Jitted, static_argnames=("lower",))
def _cho_solve(c: Any, b: Any, lower: bool) -> Array:
    c, b = promote_dtypes_inexact(jnp.asarray(c), jnp.asarray(b))
    signature = solve_signature("cho_solve", c, b)
    # Two triangular solves: with the factor's (conjugate) transpose, then with the factor.
    first = partial(
        lax_linalg.triangular_solve,
        left_side=True,
        lower=lower,
        transpose_a=not lower,
        conjugate_a=not lower,
    )
    b = jnp.vectorize(first, signature=signature)(c, b)
    second = partial(
        lax_linalg.triangular_solve,
        left_side=True,
        lower=lower,
        transpose_a=lower,
        conjugate_a=lower,
    )
    return jnp.vectorize(second, signature=signature)(c, b)


def cho_solve(
    c_and_lower: tuple[Any, bool], b: Any, overwrite_b: bool = False, check_finite: bool = True
) -> Array:
    """x with a x = b, given `cho_factor(a)`."""
    del overwrite_b, check_finite
    c, lower = c_and_lower
    return _cho_solve(c, b, lower)


@partial(Jitted, static_argnames=("overwrite_a", "check_finite"))
def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> tuple[Array, Array]:
    """(lu, pivots): L and U packed in one matrix, and the row swapped with each row."""
    del overwrite_a, check_finite
    (a,) = promote_dtypes_inexact(jnp.asarray(a))
    packed, pivots, _ = lax_linalg.lu(a)
    return packed, pivots


@partial(Jitted, static_argnums=(1,))
def _lu(a: Any, permute_l: bool) -> tuple[Array, ...]:
    (a,) = promote_dtypes_inexact(jnp.asarray(a))
    packed, _, permutation = lax_linalg.lu(a)
    dtype = dtype_of(a)
    m, n = np.shape(a)
    columns = permutation[None, :]
    rows = jnp.arange(m, dtype=dtype_of(permutation))[:, None]
    p = jnp.real(jnp.array(columns == rows, dtype=dtype))
    k = min(m, n)
    lower = jnp.tril(packed, -1)[:, :k] + jnp.eye(m, k, dtype=dtype)
    upper = jnp.triu(packed)[:k, :]
    if permute_l:
        return jnp.matmul(p, lower, precision=lax.Precision.HIGHEST), upper
    return p, lower, upper


@partial(Jitted, static_argnames=("permute_l", "overwrite_a", "check_finite"))
def lu(
    a: Any, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> tuple[Array, ...]:
    """(p, l, u) with a = p l u (l unit lower, u upper), or (p l, u) with `permute_l`."""
    del overwrite_a, check_finite
    factors: tuple[Array, ...] = _lu(a, permute_l)
    return factors


@partial(Jitted, static_argnames=("trans", "overwrite_b", "check_finite"))
def lu_solve(
    lu_and_piv: tuple[Any, Any],
    b: Any,
    trans: int = 0,
    overwrite_b: bool = False,
    check_finite: bool = True,
) -> Array:
    """x with op(a) x = b (op per `trans`: 0 none, 1 transpose, 2 conjugate transpose), given
    `lu_factor(a)`."""
    del overwrite_b, check_finite
    packed, pivots = lu_and_piv
    packed, b = promote_dtypes_inexact(jnp.asarray(packed), jnp.asarray(b))
    m = shape_of(packed)[-2]
    permutation = lax_linalg.lu_pivots_to_permutation(pivots, m)
    signature = solve_signature("lu_solve", packed, b, extra="(n),")
    solve_one = partial(lax_lu_solve, trans=trans)
    return jnp.vectorize(solve_one, signature=signature)(packed, permutation, b)


@partial(Jitted, static_argnames=("assume_a", "lower"))
def _solve(a: Any, b: Any, assume_a: str, lower: bool) -> Array:
    if assume_a != "pos":
        return jnp.linalg.solve(a, b)
    a, b = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(b))
    check_solve_shapes(a, b)
    # Factor once, outside differentiation; derivatives are further solves with the factor.
    factors = cho_factor(lax.stop_gradient(a), lower=lower)

    def custom_solve(rhs: Array) -> Array:
        return lax.custom_linear_solve(
            lambda x: batched_matvec(a, x),
            rhs,
            solve=lambda _, x: cho_solve(factors, x),
            symmetric=True,
        )

    a_ndim, b_ndim = len(shape_of(a)), len(shape_of(b))
    if a_ndim == b_ndim + 1:
        return custom_solve(b)
    out: Array = vmap(custom_solve, b_ndim - 1, max(a_ndim, b_ndim) - 1)(b)
    return out


def solve(
    a: Any,
    b: Any,
    lower: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    debug: bool = False,
    check_finite: bool = True,
    assume_a: str = "gen",
) -> Array:
    """x with a x = b: by LU (`assume_a` 'gen', 'sym' or 'her') or by Cholesky ('pos', reading
    the `lower` or upper triangle)."""
    del overwrite_a, overwrite_b, debug, check_finite
    valid = ["gen", "sym", "her", "pos"]
    if assume_a not in valid:
        raise ValueError(f"Expected assume_a to be one of {valid}; got {assume_a!r}")
    return _solve(a, b, assume_a, lower)


def inv(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Array:
    """The inverse of each square matrix in `a`, as `jnp.linalg.inv`."""
    del overwrite_a, check_finite
    out: Array = jnp.linalg.inv(a)
    return out


def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Array:
    """The determinant of each square matrix in `a`, as `jnp.linalg.det`."""
    del overwrite_a, check_finite
    out: Array = jnp.linalg.det(a)
    return out


@partial(Jitted, static_argnames=("mode", "pivoting"))
def _qr(a: Any, mode: str, pivoting: bool) -> tuple[Array, ...]:
    if mode in ("full", "r"):
        full_matrices = True
    elif mode == "economic":
        full_matrices = False
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    (a,) = promote_dtypes_inexact(jnp.asarray(a))
    factors: tuple[Array, ...] = lax_linalg.qr(a, pivoting=pivoting, full_matrices=full_matrices)
    q, r, *columns = factors
    if mode == "r":
        return (r, columns[0]) if pivoting else (r,)
    return (q, r, columns[0]) if pivoting else (q, r)


def qr(
    a: Any,
    overwrite_a: bool = False,
    lwork: Any = None,
    mode: str = "full",
    pivoting: bool = False,
    check_finite: bool = True,
) -> tuple[Array, ...]:
    """(q, r) with a = q r ('full' or 'economic' `mode`), or (r,) for mode 'r'; with
    `pivoting`, also the column permutation p (a[:, p] = q r)."""
    del overwrite_a, lwork, check_finite
    out: tuple[Array, ...] = _qr(a, mode, pivoting)
    return out


@partial(Jitted, static_argnames=("full_matrices", "compute_uv"))
def _svd(a: Any, *, full_matrices: bool, compute_uv: bool) -> Any:
    (a,) = promote_dtypes_inexact(jnp.asarray(a))
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def svd(
    a: Any,
    full_matrices: bool = True,
    compute_uv: bool = True,
    overwrite_a: bool = False,
    check_finite: bool = True,
    lapack_driver: str = "gesdd",
) -> Any:
    """(u, s, vh) with a = u diag(s) vh, or only the singular values s without `compute_uv`."""
    del overwrite_a, check_finite, lapack_driver
    return _svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


@partial(Jitted, static_argnames=("lower", "eigvals_only", "eigvals", "type"))
def _eigh(a: Any, b: Any, lower: bool, eigvals_only: bool, eigvals: None, type: int) -> Any:
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    (a,) = promote_dtypes_inexact(jnp.asarray(a))
    v, w = lax_linalg.eigh(a, lower=lower)
    return w if eigvals_only else (w, v)


def eigh(
    a: Any,
    b: Any = None,
    lower: bool = True,
    eigvals_only: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    turbo: bool = True,
    eigvals: None = None,
    type: int = 1,
    check_finite: bool = True,
) -> Any:
    """(w, v): ascending eigenvalues and eigenvectors of the Hermitian `a` (its `lower` or upper
    triangle read), or only w with `eigvals_only`."""
    del overwrite_a, overwrite_b, turbo, check_finite
    return _eigh(a, b, lower, eigvals_only, eigvals, type)


def _solve_sylvester_triangular_scan(R: Array, S: Array, F: Array) -> Array:
    """Y with R Y + Y S^T = F for upper-triangular R (m x m) and S (n x n) (Bartels and
    Stewart's back substitution), one entry per scan step from the bottom-right corner."""
    R, S, F = promote_args_inexact("_solve_sylvester_triangular_scan", R, S, F)
    m, n = shape_of(F)
    total = m * n
    flat_indices = jnp.arange(total - 1, -1, -1)
    Y0 = jnp.zeros((m * n,), dtype=dtype_of(F))

    def step(Y_flat: Array, idx: Array) -> tuple[Array, None]:
        i = jnp.floor_divide(idx, n)
        j = jnp.remainder(idx, n)
        Y = jnp.reshape(Y_flat, (m, n))
        rhs = F[i, j]
        row_mask = jnp.arange(m) > i
        row_term = jnp.sum(jnp.where(row_mask, R[i, :] * Y[:, j], 0.0))
        col_mask = jnp.arange(n) > j
        col_term = jnp.sum(jnp.where(col_mask, Y[i, :] * S[:, j], 0.0))
        rhs = rhs - (row_term + col_term)
        val = rhs / (R[i, i] + S[j, j])
        return at(Y_flat)[i * n + j].set(val), None

    Y_flat, _ = lax.scan(step, Y0, flat_indices)
    return jnp.reshape(Y_flat, (m, n))


@partial(Jitted, static_argnames=["method"])
def _solve_sylvester_2d(A: Array, B: Array, C: Array, *, method: str, tol: float) -> Array:
    m, n = shape_of(C)[-2:]
    if method == "schur":
        R, U = schur(A, output="complex")
        S, V = schur(jnp.transpose(jnp.conj(B)), output="complex")
        U_h = jnp.transpose(jnp.conj(U))
        F = jnp.matmul(jnp.matmul(U_h, C.astype(dtype_of(R))), V)
        Y = _solve_sylvester_triangular_scan(R, jnp.transpose(jnp.conj(S)), F)
        X = jnp.matmul(jnp.matmul(U, Y), jnp.transpose(jnp.conj(V)))
    elif method == "eigen":
        RA, UA = jnp.linalg.eig(A)
        RB, UB = jnp.linalg.eig(B)
        F = solve(UA, jnp.matmul(C.astype(dtype_of(RA)), UB))
        W = RA[:, None] + RB[None, :]
        Y = F / W
        X = jnp.matmul(jnp.matmul(UA[:m, :m], Y[:m, :n]), inv(UB)[:n, :n])
    else:
        raise ValueError(
            f'Unrecognized method {method}. The two valid methods are either "schur" or "eigen".'
        )
    if dtype_of(C).kind != "c":
        X = jnp.real(X)
    sums = jnp.linalg.eigvals(A)[:, None] + jnp.linalg.eigvals(B)[None, :]
    return lax.cond(
        jnp.any(jnp.abs(sums) < tol),
        lambda: jnp.zeros_like(X) * np.nan,
        lambda: X,
    )


@partial(Jitted, static_argnames=["method"])
def solve_sylvester(A: Any, B: Any, C: Any, *, method: str = "schur", tol: float = 1e-8) -> Array:
    """X with A X + X B = C, by the complex Schur forms of A and B (`method='schur'`, Bartels
    and Stewart) or their eigendecompositions ('eigen'); NaNs where some eigenvalue of A plus
    one of B is within `tol` of zero (no unique solution)."""
    A, B, C = promote_dtypes_inexact(jnp.asarray(A), jnp.asarray(B), jnp.asarray(C))
    m, n = shape_of(C)[-2:]
    if tuple(shape_of(A)[-2:]) != (m, m) or tuple(shape_of(B)[-2:]) != (n, n):
        raise ValueError(
            "Incompatible shapes for Sylvester equation:\n"
            f"A: {shape_of(A)}\nB: {shape_of(B)}\nC: {shape_of(C)}"
        )
    one = partial(_solve_sylvester_2d, method=method, tol=tol)
    out: Array = jnp.vectorize(one, signature="(m,m),(n,n),(m,n)->(m,n)")(A, B, C)
    return out


__all__ = [
    "block_diag",
    "cho_factor",
    "cho_solve",
    "cholesky",
    "circulant",
    "companion",
    "convolution_matrix",
    "det",
    "dft",
    "eigh",
    "eigh_tridiagonal",
    "expm",
    "expm_frechet",
    "fiedler",
    "fiedler_companion",
    "funm",
    "hadamard",
    "hankel",
    "helmert",
    "hessenberg",
    "hilbert",
    "inv",
    "invhilbert",
    "invpascal",
    "leslie",
    "lu",
    "lu_factor",
    "lu_solve",
    "pascal",
    "polar",
    "qr",
    "qr_multiply",
    "rsf2csf",
    "schur",
    "solve",
    "solve_sylvester",
    "solve_triangular",
    "sqrtm",
    "svd",
    "toeplitz",
]
