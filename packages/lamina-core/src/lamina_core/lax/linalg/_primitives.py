"""The LAPACK-style primitives of `jax.lax.linalg`: `cholesky`, `triangular_solve`, `lu` and
`lu_pivots_to_permutation`, with their shape and dtype checks and NumPy references.

Every one takes leading batch dimensions (the same number in every operand) before its matrix
dimensions. As on JAX's CPU backend, `cholesky_p` leaves the upper triangle of its operand in
place (the public `cholesky` masks it) and fills a batch element with NaN where the matrix is
not positive definite; `lu_p`'s pivots are LAPACK's `getrf` choice (the first entry of largest
magnitude, `|re| + |im|` for complex numbers), 0-based.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np

from lamina_core.ir import (
    AbstractValue,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    dtypes,
    impl_rules,
)
from lamina_core.lax import _checks as c
from lamina_core.lax._ad_common import const
from lamina_core.lax._elementwise import add, conj, div, ge
from lamina_core.lax._selection import select
from lamina_core.lax._shape import asarray, broadcasted_iota, expand_dims, transpose
from lamina_core.lax._structural import broadcast, full_like
from lamina_core.lax._types import Array

cholesky_p: Final = Primitive("cholesky")
triangular_solve_p: Final = Primitive("triangular_solve")
lu_p: Final = Primitive("lu", multiple_results=True)
lu_pivots_to_permutation_p: Final = Primitive("lu_pivots_to_permutation")

_INT32: Final = np.dtype(np.int32)
_INEXACT_NAMES: Final = "floating, complexfloating"


# --- shared checks (JAX's `linalg_primitive` shape and dtype rules) --------------------------


def _check_dtypes(name: str, avals: Sequence[ShapedArray], accepted: Sequence[str]) -> None:
    for i, (aval, ok) in enumerate(zip(avals, accepted, strict=True)):
        if ok == "int32":
            good = aval.dtype == _INT32
        else:
            good = c.kind_of(aval.dtype) in ("iu" if ok == "integer" else "fc")
        if not good:
            raise TypeError(
                f"{name} does not accept dtype {aval.dtype.name} at position {i}. "
                f"Accepted dtypes at position {i} are subtypes of {ok}."
            )


def _split_batch(
    name: str, avals: Sequence[ShapedArray], ranks: Sequence[int]
) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """The common batch shape, and each operand's trailing (core) dimensions."""
    batches, cores = [], []
    for i, (aval, rank) in enumerate(zip(avals, ranks, strict=True)):
        if aval.ndim < rank:
            raise TypeError(
                f"Input {i} to {name} must have rank at least {rank}, but got shape={aval.shape}"
            )
        batches.append(aval.shape[: aval.ndim - rank])
        cores.append(aval.shape[aval.ndim - rank :])
    if any(len(b) != len(batches[0]) for b in batches):
        raise TypeError(
            f"All inputs to {name} must have the same number of batch dimensions, but got "
            f"{[len(b) for b in batches]} batch dimensions for the inputs."
        )
    return batches[0], cores


def _weak(avals: Sequence[ShapedArray]) -> bool:
    return all(a.weak_type for a in avals)


# --- cholesky ---------------------------------------------------------------------------------


@abstract_eval_rules.register(cholesky_p)
def _cholesky_abstract_eval(x: AbstractValue) -> ShapedArray:
    aval = c.array_aval("cholesky", x)
    _check_dtypes("cholesky", [aval], ["floating, complexfloating"])
    batch, (core,) = _split_batch("cholesky", [aval], [2])
    if core[0] != core[1]:
        raise ValueError(f"The input to cholesky must be a square matrix. Got shape {core}.")
    return ShapedArray(batch + core, aval.dtype, weak_type=aval.weak_type)


def _compute_dtype(dtype: np.dtype) -> np.dtype:
    """The NumPy dtype a reference computes in (the narrow floats widened)."""
    if dtype.kind == "c":
        return dtype
    return np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)


def _per_matrix(x: np.ndarray, fn: Callable[[np.ndarray], Any]) -> list[Any]:
    return [fn(x[idx]) for idx in np.ndindex(*x.shape[:-2])]


def _cholesky_one(a: np.ndarray) -> np.ndarray:
    lower = np.tril(a)
    full = lower + np.conj(np.tril(a, -1)).T
    try:
        factor = np.linalg.cholesky(full)
    except np.linalg.LinAlgError:
        return np.full_like(a, np.nan)
    if not np.all(np.isfinite(factor)):
        return np.full_like(a, np.nan)
    out: np.ndarray = factor + np.triu(a, 1)
    return out


@impl_rules.register(cholesky_p)
def _cholesky_impl(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    work = x.astype(_compute_dtype(x.dtype))
    out = np.empty_like(work)
    for idx in np.ndindex(*x.shape[:-2]):
        out[idx] = _cholesky_one(work[idx])
    return out.astype(x.dtype)


def _tri_mask(n_rows: int, n_cols: int, k: int) -> Array:
    """True on and below diagonal `k` (JAX's `_tri`: the iotas take the wider of int32 and the
    default integer type, which the offset has)."""
    index = dtypes.canonicalize_dtype(np.dtype(np.int64))
    rows = add(broadcasted_iota(index, (n_rows, n_cols), 0), np.array(k, index))
    return ge(rows, broadcasted_iota(index, (n_rows, n_cols), 1))


def _tril(m: Array, k: int = 0) -> Array:
    """`m` with the entries above diagonal `k` zeroed (JAX's mask: iotas, `ge`, `select`)."""
    shape = tuple(m.shape)
    mask = broadcast(_tri_mask(shape[-2], shape[-1], k), shape[:-2])
    return select(mask, m, full_like(m, 0))


def _triu(m: Array, k: int = 0) -> Array:
    """`m` with the entries below diagonal `k` zeroed."""
    shape = tuple(m.shape)
    mask = broadcast(_tri_mask(shape[-2], shape[-1], k - 1), shape[:-2])
    return select(mask, full_like(m, 0), m)


def _T(x: Array) -> Array:
    nd = x.ndim
    return transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def _H(x: Array) -> Array:
    # A real matrix is its own conjugate (`lax.conj` would make it complex).
    return conj(_T(x)) if c.kind_of(x.dtype) == "c" else _T(x)


def _symmetrize(x: Array) -> Array:
    return div(add(x, _H(x)), const(x, 2))


def cholesky(x: Array, *, symmetrize_input: bool = True) -> Array:
    """The lower Cholesky factor `L` of each (Hermitian positive definite) matrix in `x`, so
    that `x = L @ L^H`; NaN where the factorization fails. With `symmetrize_input`, the factor
    of `(x + x^H) / 2`; without it, only the lower triangle of `x` is read."""
    x = asarray(x)
    if symmetrize_input:
        x = _symmetrize(x)
    return _tril(cholesky_p.bind(x))


# --- triangular_solve -------------------------------------------------------------------------


@abstract_eval_rules.register(triangular_solve_p)
def _triangular_solve_abstract_eval(
    a: AbstractValue,
    b: AbstractValue,
    *,
    left_side: bool,
    lower: bool,
    transpose_a: bool,
    conjugate_a: bool,
    unit_diagonal: bool,
) -> ShapedArray:
    name = "triangular_solve"
    avals = [c.array_aval(name, a), c.array_aval(name, b)]
    _check_dtypes(name, avals, [_INEXACT_NAMES, _INEXACT_NAMES])
    if avals[0].dtype != avals[1].dtype:
        raise TypeError(
            f"lax.{name} requires arguments to have the same dtypes, got "
            f"{avals[0].dtype.name}, {avals[1].dtype.name}."
        )
    batch, (a_core, b_core) = _split_batch(name, avals, [2, 2])
    if a_core[0] != a_core[1]:
        raise ValueError(
            f"The first input to triangular_solve must be a square matrix. Got shape {a_core}."
        )
    common = -2 if left_side else -1
    if a_core[-1] != b_core[common]:
        raise ValueError(
            f"Incompatible shapes for arguments to triangular_solve: {a_core} and {b_core}."
        )
    return ShapedArray(batch + b_core, avals[0].dtype, weak_type=_weak(avals))


def _substitute(t: np.ndarray, b: np.ndarray, lower: bool) -> np.ndarray:
    """Solve `t @ x = b` for triangular `t` (a stack of them) by substitution: LAPACK's
    arithmetic, so a zero pivot gives infinities and NaNs rather than an error."""
    n = t.shape[-1]
    x = np.zeros_like(b)
    order = range(n) if lower else range(n - 1, -1, -1)
    with np.errstate(all="ignore"):
        for i in order:
            acc = b[..., i, :] - np.einsum("...j,...jk->...k", t[..., i, :], x)
            x[..., i, :] = acc / t[..., i, i, None]
    return x


@impl_rules.register(triangular_solve_p)
def _triangular_solve_impl(
    a: np.ndarray,
    b: np.ndarray,
    *,
    left_side: bool,
    lower: bool,
    transpose_a: bool,
    conjugate_a: bool,
    unit_diagonal: bool,
) -> np.ndarray:
    a, b = np.asarray(a), np.asarray(b)
    work = _compute_dtype(b.dtype)
    t = np.tril(a) if lower else np.triu(a)
    t = t.astype(work)
    if unit_diagonal:
        n = t.shape[-1]
        t[..., np.arange(n), np.arange(n)] = 1
    if conjugate_a:
        t = np.conj(t)
    t_lower = lower
    if transpose_a:
        t, t_lower = np.swapaxes(t, -1, -2), not lower
    rhs = b.astype(work)
    if left_side:
        out = _substitute(t, rhs, t_lower)
    else:
        # x @ t = b  <=>  t^T @ x^T = b^T
        out = np.swapaxes(
            _substitute(np.swapaxes(t, -1, -2), np.swapaxes(rhs, -1, -2), not t_lower), -1, -2
        )
    return out.astype(b.dtype)


def triangular_solve(
    a: Array,
    b: Array,
    *,
    left_side: bool = False,
    lower: bool = False,
    transpose_a: bool = False,
    conjugate_a: bool = False,
    unit_diagonal: bool = False,
) -> Array:
    """Solve `op(a) @ x = b` (`left_side`) or `x @ op(a) = b` for `x`, with `a` triangular
    (its `lower` or upper triangle read; a unit diagonal assumed with `unit_diagonal`) and
    `op` transposing and/or conjugating it. `b` may have one dimension fewer than `a` (a
    vector, or a batch of them)."""
    a, b = asarray(a), asarray(b)
    conjugate_a = conjugate_a and c.kind_of(a.dtype) == "c"
    singleton = b.ndim == a.ndim - 1
    if singleton:
        b = expand_dims(b, (-1 if left_side else -2,))
    out = triangular_solve_p.bind(
        a,
        b,
        left_side=left_side,
        lower=lower,
        transpose_a=transpose_a,
        conjugate_a=conjugate_a,
        unit_diagonal=unit_diagonal,
    )
    if singleton:
        out = out[..., 0] if left_side else out[..., 0, :]
    return out


# --- lu ---------------------------------------------------------------------------------------


@abstract_eval_rules.register(lu_p)
def _lu_abstract_eval(x: AbstractValue) -> list[ShapedArray]:
    aval = c.array_aval("lu", x)
    _check_dtypes("lu", [aval], [_INEXACT_NAMES])
    batch, ((m, n),) = _split_batch("lu", [aval], [2])
    weak = aval.weak_type
    return [
        ShapedArray((*batch, m, n), aval.dtype, weak_type=weak),
        ShapedArray((*batch, min(m, n)), _INT32, weak_type=weak),
        ShapedArray((*batch, m), _INT32, weak_type=weak),
    ]


def _magnitude(column: np.ndarray) -> np.ndarray:
    out: np.ndarray = (
        np.abs(column.real) + np.abs(column.imag) if column.dtype.kind == "c" else np.abs(column)
    )
    return out


def lu_reference(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Partial-pivoting LU of one matrix, in place on a copy: `(lu, pivots)`, pivots 0-based
    with `getrf`'s choice (the first row of largest magnitude in the column)."""
    a = np.array(a)
    m, n = a.shape
    pivots = np.zeros(min(m, n), np.int32)
    with np.errstate(all="ignore"):
        for k in range(min(m, n)):
            p = k + int(np.argmax(_magnitude(a[k:, k])))
            pivots[k] = p
            if p != k:
                a[[k, p]] = a[[p, k]]
            if a[k, k] != 0:
                a[k + 1 :, k] /= a[k, k]
            a[k + 1 :, k + 1 :] -= np.outer(a[k + 1 :, k], a[k, k + 1 :])
    return a, pivots


def _permutation_of(pivots: np.ndarray, size: int) -> np.ndarray:
    perm = np.arange(size, dtype=np.int32)
    for i, j in enumerate(pivots):
        perm[[i, j]] = perm[[j, i]]
    return perm


@impl_rules.register(lu_p)
def _lu_impl(x: np.ndarray) -> list[np.ndarray]:
    x = np.asarray(x)
    m, n = x.shape[-2:]
    batch = x.shape[:-2]
    work = x.astype(_compute_dtype(x.dtype))
    lu = np.empty_like(work)
    pivots = np.empty((*batch, min(m, n)), np.int32)
    perm = np.empty((*batch, m), np.int32)
    for idx in np.ndindex(*batch):
        lu[idx], pivots[idx] = lu_reference(work[idx])
        perm[idx] = _permutation_of(pivots[idx], m)
    return [lu.astype(x.dtype), pivots, perm]


def lu(x: Array) -> tuple[Array, Array, Array]:
    """LU decomposition with partial pivoting, `P @ x = L @ U`: `(lu, pivots, permutation)`,
    `lu` holding `L` (unit diagonal implied) below the diagonal and `U` on and above it,
    `pivots` the int32 row swaps and `permutation` the int32 permutation they make."""
    out = lu_p.bind(x)
    return out[0], out[1], out[2]


# --- lu_pivots_to_permutation -----------------------------------------------------------------


@abstract_eval_rules.register(lu_pivots_to_permutation_p)
def _pivots_abstract_eval(pivots: AbstractValue, *, permutation_size: int) -> ShapedArray:
    name = "lu_pivots_to_permutation"
    aval = c.array_aval(name, pivots)
    _check_dtypes(name, [aval], ["int32"])
    batch, ((k,),) = _split_batch(name, [aval], [1])
    if not permutation_size >= k:
        raise ValueError(
            f"Output permutation size {permutation_size} has to exceed the trailing dimension "
            f"of the pivots. Got pivots size {k}"
        )
    return ShapedArray((*batch, permutation_size), _INT32, weak_type=aval.weak_type)


@impl_rules.register(lu_pivots_to_permutation_p)
def _pivots_impl(pivots: np.ndarray, *, permutation_size: int) -> np.ndarray:
    pivots = np.asarray(pivots)
    batch = pivots.shape[:-1]
    out = np.empty((*batch, permutation_size), np.int32)
    for idx in np.ndindex(*batch):
        out[idx] = _permutation_of(pivots[idx], permutation_size)
    return out


def lu_pivots_to_permutation(pivots: Array, permutation_size: int) -> Array:
    """The int32 permutation of `permutation_size` elements that the row swaps `pivots` (an
    int32 array `(..., k)`, `k <= permutation_size`) make, applied in order."""
    return lu_pivots_to_permutation_p.bind(pivots, permutation_size=permutation_size)


__all__ = [
    "cholesky",
    "cholesky_p",
    "lu",
    "lu_p",
    "lu_pivots_to_permutation",
    "lu_pivots_to_permutation_p",
    "triangular_solve",
    "triangular_solve_p",
]
