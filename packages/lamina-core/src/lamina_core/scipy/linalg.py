"""`jax.scipy.linalg` for Lamina: `block_diag`, and what `lax.linalg`'s Cholesky, LU and
triangular-solve primitives give: cholesky, cho_factor, cho_solve, solve_triangular,
lu_factor and lu, staged as JAX 0.10.2 stages them.

Not here yet: lu_solve (JAX's `lax.linalg.lu_solve` helper), qr, svd, eigh, schur, det, inv,
solve, expm and the rest, which need primitives or `jnp.linalg` functions Lamina lacks;
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
from lamina_core.numpy._promote import promote_dtypes, promote_dtypes_inexact
from lamina_core.numpy._util import dtype_of, shape_of

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


__all__ = [
    "block_diag",
    "cho_factor",
    "cho_solve",
    "cholesky",
    "lu",
    "lu_factor",
    "solve_triangular",
]
