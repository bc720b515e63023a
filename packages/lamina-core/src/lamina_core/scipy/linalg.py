"""`jax.scipy.linalg` for Lamina: `block_diag`, and what `lax.linalg`'s Cholesky, LU and
triangular-solve primitives give: cholesky, cho_factor, cho_solve, solve_triangular,
lu_factor, lu and lu_solve; solve (LU, or Cholesky for `assume_a='pos'`, both on
`custom_linear_solve`), inv and det through `jnp.linalg`; qr, svd and eigh on their
primitives; all staged as JAX 0.10.2 stages them.

Not here yet: schur, expm, eigh_tridiagonal and the rest;
`toeplitz` waits for `conv_general_dilated_patches`.
"""

from __future__ import annotations

import warnings
from functools import partial
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.jit import Jitted
from lamina_core.lax import linalg as lax_linalg
from lamina_core.numpy import _linalg_solve
from lamina_core.numpy._promote import promote_dtypes, promote_dtypes_inexact
from lamina_core.numpy._util import dtype_of, shape_of
from lamina_core.vmap_api import vmap

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


def _solve_signature(name: str, a: Any, b: Any, extra: str = "") -> str:
    """The gufunc signature of one solve: a vector right-hand side, or a matrix of them."""
    a_ndim, b_ndim = len(shape_of(a)), len(shape_of(b))
    if b_ndim == 1:
        return f"(n,n),{extra}(n)->(n)"
    if a_ndim == b_ndim + 1 and shape_of(a)[-1] == shape_of(b)[-1]:
        warnings.warn(
            f"jax.scipy.linalg.{name}: batched 1D solves with b.ndim > 1 are deprecated, and "
            "in the future will be treated as a batched 2D solve. Use "
            f"{_SQUEEZE_HINT[name]} to avoid this warning.",
            category=FutureWarning,
            stacklevel=4,
        )
        return f"(n,n),{extra}(n)->(n)"
    return f"(n,n),{extra}(n,k)->(n,k)"


_SQUEEZE_HINT = {
    "cho_solve": "cho_solve(c_and_lower, b[..., None]).squeeze(-1)",
    "solve_triangular": "solve_triangular(a, b[..., None]).squeeze(-1)",
    "lu_solve": "lu_solve(lu_and_piv, b[..., None]).squeeze(-1)",
}


@partial(Jitted, static_argnames=("lower",))
def _cho_solve(c: Any, b: Any, lower: bool) -> Array:
    c, b = promote_dtypes_inexact(jnp.asarray(c), jnp.asarray(b))
    signature = _solve_signature("cho_solve", c, b)
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


_TRANS = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False)}
_TRANS |= {2: (True, True), "C": (True, True)}


@partial(Jitted, static_argnames=("trans", "lower", "unit_diagonal"))
def _solve_triangular(a: Any, b: Any, trans: int | str, lower: bool, unit_diagonal: bool) -> Array:
    if trans not in _TRANS:
        raise ValueError(f"Invalid 'trans' value {trans}")
    transpose_a, conjugate_a = _TRANS[trans]
    a, b = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(b))
    signature = _solve_signature("solve_triangular", a, b)
    solve = partial(
        lax_linalg.triangular_solve,
        left_side=True,
        lower=lower,
        transpose_a=transpose_a,
        conjugate_a=conjugate_a,
        unit_diagonal=unit_diagonal,
    )
    return jnp.vectorize(solve, signature=signature)(a, b)


def solve_triangular(
    a: Any,
    b: Any,
    trans: int | str = 0,
    lower: bool = False,
    unit_diagonal: bool = False,
    overwrite_b: bool = False,
    debug: Any = None,
    check_finite: bool = True,
) -> Array:
    """x with op(a) x = b for triangular `a` (op per `trans`: 0/'N', 1/'T' or 2/'C')."""
    del overwrite_b, debug, check_finite
    return _solve_triangular(a, b, trans, lower, unit_diagonal)


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
    signature = _solve_signature("lu_solve", packed, b, extra="(n),")
    solve_one = partial(_linalg_solve.lu_solve, trans=trans)
    return jnp.vectorize(solve_one, signature=signature)(packed, permutation, b)


@partial(Jitted, static_argnames=("assume_a", "lower"))
def _solve(a: Any, b: Any, assume_a: str, lower: bool) -> Array:
    if assume_a != "pos":
        return jnp.linalg.solve(a, b)
    a, b = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(b))
    _linalg_solve.check_solve_shapes(a, b)
    # Factor once, outside differentiation; derivatives are further solves with the factor.
    factors = cho_factor(lax.stop_gradient(a), lower=lower)

    def custom_solve(rhs: Array) -> Array:
        return lax.custom_linear_solve(
            lambda x: _linalg_solve.batched_matvec(a, x),
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


__all__ = [
    "block_diag",
    "cho_factor",
    "cho_solve",
    "cholesky",
    "det",
    "eigh",
    "inv",
    "lu",
    "lu_factor",
    "lu_solve",
    "qr",
    "solve",
    "solve_triangular",
    "svd",
]
