"""The QR primitives of `jax.lax.linalg`: `geqrf_p` (LAPACK's Householder factorization: `R`
in the upper triangle, the reflectors below it and their scales `taus`),
`householder_product_p` (the first columns of the product of those reflectors, LAPACK's
`orgqr`) and `qr_p` (`x = q @ r`, lowered by composing the two as JAX does), with JAX's checks
and messages, NumPy references, `qr`'s jvp rule (thin, wide and full-matrix cases, as JAX's)
and leading-batch-dimension batching. With `pivoting=True`, `qr` also returns the column
permutation `p` (`x[..., p] = q @ r`), from LAPACK's `geqp3` in place of `geqrf`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from lamina_core.interpreters import instantiate_zeros, jvp_rules, not_differentiable, zero_of
from lamina_core.ir import AbstractValue, Primitive, ShapedArray, abstract_eval_rules, impl_rules
from lamina_core.lax import _checks as c
from lamina_core.lax._ad_common import aval_of
from lamina_core.lax._elementwise import add, eq, sub
from lamina_core.lax._joining import concatenate, pad
from lamina_core.lax._shape import broadcasted_iota, expand_dims, iota, reshape
from lamina_core.lax._sorting import sort_key_val
from lamina_core.lax._structural import _convert_element_type, broadcast_in_dim, full
from lamina_core.lax._types import Array
from lamina_core.lax.linalg._ad import _eye
from lamina_core.lax.linalg._batching import _leading_batcher
from lamina_core.lax.linalg._geqp3 import _geqp3_impl, geqp3
from lamina_core.lax.linalg._primitives import (
    _H,
    _INEXACT_NAMES,
    _check_dtypes,
    _split_batch,
    _tril,
    _triu,
    lu,
    triangular_solve,
)
from lamina_core.transforms import jit, vmap

geqrf_p: Final = Primitive("geqrf", multiple_results=True)
householder_product_p: Final = Primitive("householder_product")
qr_p: Final = Primitive("qr", multiple_results=True)

_INT32: Final = np.dtype(np.int32)


def _work_dtype(dtype: np.dtype) -> np.dtype:
    if dtype.kind == "c" or dtype == np.float64:
        return dtype
    return np.dtype(np.float32)


# --- geqrf ------------------------------------------------------------------------------------


@abstract_eval_rules.register(geqrf_p)
def _geqrf_abstract_eval(a: AbstractValue) -> list[ShapedArray]:
    aval = c.array_aval("geqrf", a)
    _check_dtypes("geqrf", [aval], [_INEXACT_NAMES])
    batch, ((m, n),) = _split_batch("geqrf", [aval], [2])
    weak = aval.weak_type
    return [
        ShapedArray(aval.shape, aval.dtype, weak_type=weak),
        ShapedArray((*batch, min(m, n)), aval.dtype, weak_type=weak),
    ]


def _geqrf_one(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    m, n = a.shape
    if m == 0 or n == 0:
        return a.copy(), np.zeros(0, a.dtype)
    # NumPy's "raw" mode is LAPACK's geqrf, its factor transposed (Fortran order).
    h, taus = np.linalg.qr(a, mode="raw")
    return np.asarray(h).T, np.asarray(taus)


@impl_rules.register(geqrf_p)
def _geqrf_impl(a: np.ndarray) -> list[np.ndarray]:
    a = np.asarray(a)
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    work = a.astype(_work_dtype(a.dtype))
    out = np.empty_like(work)
    taus = np.empty((*batch, min(m, n)), work.dtype)
    for idx in np.ndindex(*batch):
        out[idx], taus[idx] = _geqrf_one(work[idx])
    return [out.astype(a.dtype), taus.astype(a.dtype)]


def geqrf(a: Array) -> tuple[Array, Array]:
    """LAPACK's Householder QR of each matrix in `a` (`..., m, n`): `(a_out, taus)`, `R` in
    the upper triangle of `a_out`, the reflectors' vectors below it and their scales in
    `taus` (`..., min(m, n)`)."""
    out, taus = geqrf_p.bind(a)
    return out, taus


# --- householder_product ----------------------------------------------------------------------


@abstract_eval_rules.register(householder_product_p)
def _householder_product_abstract_eval(a: AbstractValue, taus: AbstractValue) -> ShapedArray:
    name = "householder_product"
    avals = [c.array_aval(name, a), c.array_aval(name, taus)]
    _check_dtypes(name, avals, [_INEXACT_NAMES, _INEXACT_NAMES])
    if avals[0].dtype != avals[1].dtype:
        raise TypeError(
            f"{name} requires arguments to have the same dtypes, got "
            f"{avals[0].dtype.name}, {avals[1].dtype.name}."
        )
    batch, ((m, n), (k,)) = _split_batch(name, avals, [2, 1])
    if m < n:
        raise ValueError(
            "The first argument to householder_product must have at least as many rows as "
            f"columns, got shape {(m, n)}"
        )
    if k > min(m, n):
        raise ValueError(
            "The second argument to householder_product must not have more rows than the "
            "minimum of the first argument's rows and columns."
        )
    weak = all(a.weak_type for a in avals)
    return ShapedArray((*batch, m, n), avals[0].dtype, weak_type=weak)


def _householder_product_one(a: np.ndarray, taus: np.ndarray) -> np.ndarray:
    """The first `n` columns of `H_0 H_1 ... H_{k-1}`, `H_i = I - tau_i v_i v_i^H`."""
    m, n = a.shape
    q = np.eye(m, n, dtype=a.dtype)
    for i in range(len(taus) - 1, -1, -1):
        v = np.zeros(m, a.dtype)
        v[i] = 1
        v[i + 1 :] = a[i + 1 :, i]
        q -= taus[i] * np.outer(v, np.conj(v) @ q)
    return q


@impl_rules.register(householder_product_p)
def _householder_product_impl(a: np.ndarray, taus: np.ndarray) -> np.ndarray:
    a, taus = np.asarray(a), np.asarray(taus)
    work = _work_dtype(a.dtype)
    out = np.empty(a.shape, work)
    for idx in np.ndindex(*a.shape[:-2]):
        out[idx] = _householder_product_one(a[idx].astype(work), taus[idx].astype(work))
    return out.astype(a.dtype)


def householder_product(a: Array, taus: Array) -> Array:
    """The first columns of the product of `geqrf`'s Householder reflectors (in `a`, `..., m,
    n` with `m >= n`, scaled by `taus`): LAPACK's `orgqr`/`ungqr`."""
    return householder_product_p.bind(a, taus)


# --- qr ---------------------------------------------------------------------------------------


@abstract_eval_rules.register(qr_p)
def _qr_abstract_eval(
    x: AbstractValue, *, pivoting: bool, full_matrices: bool, use_magma: Any
) -> list[ShapedArray]:
    aval = c.array_aval("qr", x)
    _check_dtypes("qr", [aval], [_INEXACT_NAMES])
    batch, ((m, n),) = _split_batch("qr", [aval], [2])
    k = m if full_matrices else min(m, n)
    weak = aval.weak_type
    out = [
        ShapedArray((*batch, m, k), aval.dtype, weak_type=weak),
        ShapedArray((*batch, k, n), aval.dtype, weak_type=weak),
    ]
    if pivoting:
        out.append(ShapedArray((*batch, n), _INT32, weak_type=weak))
    return out


@impl_rules.register(qr_p)
def _qr_impl(
    x: np.ndarray, *, pivoting: bool, full_matrices: bool, use_magma: Any
) -> list[np.ndarray]:
    x = np.asarray(x)
    *batch, m, n = x.shape
    k = m if full_matrices else min(m, n)
    pivots = [np.zeros((*batch, n), _INT32)] if pivoting else []
    if m == 0 or n == 0:
        q = np.broadcast_to(np.eye(m, k, dtype=x.dtype), (*batch, m, k)).copy()
        return [q, np.zeros((*batch, k, n), x.dtype), *pivots]
    if pivoting:
        r, jpvt, taus = _geqp3_impl(x, pivots[0], use_magma=use_magma)
        pivots = [jpvt - 1]
    else:
        r, taus = _geqrf_impl(x)
    if m < n:
        q = _householder_product_impl(r[..., :m, :m], taus)
    elif full_matrices:
        padded = np.zeros((*batch, m, m), r.dtype)
        padded[..., :n] = r
        q = _householder_product_impl(padded, taus)
    else:
        q = _householder_product_impl(r, taus)
        r = r[..., :n, :n]
    return [q, np.triu(r), *pivots]


def qr(
    x: Array, *, pivoting: bool = False, full_matrices: bool = True, use_magma: bool | None = None
) -> tuple[Array, ...]:
    """The QR decomposition `x = q @ r` of each matrix in `x` (`..., m, n`): `q` unitary
    (`m, m`, or `m, min(m, n)` without `full_matrices`) and `r` upper triangular (`m, n`, or
    `min(m, n), n`). With `pivoting`, `(q, r, p)`: the columns are taken in the order `p`
    (`x[..., p] = q @ r`), chosen so that `r`'s diagonal does not increase in magnitude.
    `use_magma` matters only on GPUs."""
    out: list[Array] = qr_p.bind(
        x, pivoting=pivoting, full_matrices=full_matrices, use_magma=use_magma
    )
    return tuple(out)


def _eye_rect(dtype: np.dtype, m: int, k: int) -> Any:
    rows = add(broadcasted_iota(_INT32, (m, k), 0), np.int32(0))
    return _convert_element_type(eq(rows, broadcasted_iota(_INT32, (m, k), 1)), dtype, False)


def qr_from_factors(
    a: Array, *, full_matrices: bool, pivoting: bool = False, use_magma: bool | None = None
) -> tuple[Array, ...]:
    """`q` and `r` (and with `pivoting` the permutation `p`) from `geqrf` (`geqp3`) and
    `householder_product` (JAX's CPU lowering of `qr_p`)."""
    *batch, m, n = a.shape
    if m == 0 or n == 0:
        k = m if full_matrices else min(m, n)
        nb = len(batch)
        q = broadcast_in_dim(_eye_rect(aval_of(a).dtype, m, k), (*batch, m, k), (nb, nb + 1))
        r = full((*batch, k, n), 0, dtype=aval_of(a).dtype)
        return (q, r, full((*batch, n), 0, dtype=_INT32)) if pivoting else (q, r)
    pivots: tuple[Array, ...] = ()
    if pivoting:
        r, jpvt, taus = geqp3(a, full((*batch, n), 0, dtype=_INT32), use_magma=use_magma)
        # LAPACK's pivots are 1-based.
        pivots = (sub(jpvt, np.int32(1)),)
    else:
        r, taus = geqrf(a)
    if m < n:
        q = householder_product(r[..., :m, :m], taus)
    elif full_matrices:
        pads = [(0, 0, 0)] * (len(batch) + 1) + [(0, m - n, 0)]
        q = householder_product(pad(r, np.zeros((), aval_of(r).dtype), pads), taus)
    else:
        q = householder_product(r, taus)
        r = r[..., :n, :n]
    return (q, _triu(r), *pivots)


# --- qr's jvp ---------------------------------------------------------------------------------


def _real_as_complex(x: Any) -> Any:
    return x.real.astype(x.dtype)


def _thin_qr_jvp(q: Any, r: Any, dx: Any) -> tuple[Any, Any]:
    """Tangents of `q`, `r` for `m >= n` (thin `q`), after J. Townsend's derivation."""
    dx_rinv = triangular_solve(r, dx)
    qt_dx_rinv = _H(q) @ dx_rinv
    lower_part = _tril(qt_dx_rinv, -1)
    do = lower_part - _H(lower_part)
    n = r.shape[-1]
    eye = expand_dims(_eye(aval_of(do).dtype, n), range(qt_dx_rinv.ndim - 2))
    # The imaginary part of the diagonal, which the skew-Hermitian part above misses.
    do = do + eye * (qt_dx_rinv - _real_as_complex(qt_dx_rinv))
    dq = q @ (do - qt_dx_rinv) + dx_rinv
    dr = (qt_dx_rinv - do) @ r
    return dq, dr


def _lu_solve_adjoint_core(lu_factor: Any, permutation: Any, b: Any) -> Any:
    """Solve `A^H x = b` for one matrix from `A`'s LU factors (JAX's `lu_solve`, trans=2)."""
    m = lu_factor.shape[0]
    x = reshape(b, (m, int(np.prod(b.shape[1:]))))
    conj = c.kind_of(aval_of(lu_factor).dtype) == "c"
    x = triangular_solve(
        lu_factor, x, left_side=True, lower=False, transpose_a=True, conjugate_a=conj
    )
    x = triangular_solve(
        lu_factor, x, left_side=True, lower=True, unit_diagonal=True, transpose_a=True,
        conjugate_a=conj,
    )  # fmt: skip
    _, ind = sort_key_val(permutation, iota(_INT32, permutation.shape[0]))
    x = x[ind, :]
    return reshape(x, b.shape)


def _lu_solve_adjoint(lu_factor: Any, permutation: Any, b: Any) -> Any:
    # Named as JAX's jitted helper, whose name the jaxpr prints.
    def _lu_solve(lu_factor: Any, permutation: Any, b: Any) -> Any:
        fn: Any = _lu_solve_adjoint_core
        for _ in lu_factor.shape[:-2]:
            fn = vmap(fn)
        return fn(lu_factor, permutation, b)

    return jit(_lu_solve)(lu_factor, permutation, b)


def _full_qr_tangent(q: Any, q_mn: Any, dq_mn: Any, n: int) -> Any:
    """The tangent of the last `m - n` columns of a full `q` (arXiv:2409.13374, eq. 32-33)."""
    q_nn, q_pn, q_mp = q_mn[..., :n, :], q_mn[..., n:, :], q[..., :, n:]
    dq_nn, dq_pn = dq_mn[..., :n, :], dq_mn[..., n:, :]
    eye = expand_dims(_eye(aval_of(q_nn).dtype, n), range(q_nn.ndim - 2))
    lu_factor, _, perm = lu(q_nn - eye)
    z_pn_h = _lu_solve_adjoint(lu_factor, perm, _H(q_pn))
    z_pn = _H(z_pn_h)
    dq_mp = dq_mn @ z_pn_h - (q_mn + q_mp @ z_pn) @ _H(dq_pn - z_pn @ dq_nn)
    return concatenate((dq_mn, dq_mp), dq_mn.ndim - 1)


def _qr_jvp(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    pivoting: bool,
    full_matrices: bool,
    use_magma: Any,
) -> tuple[Any, Any]:
    (x,), (dx,) = primals, tangents
    dx = instantiate_zeros(dx)
    q, r, *p = qr_p.bind(x, pivoting=pivoting, full_matrices=full_matrices, use_magma=use_magma)
    *_, m, n = x.shape
    if pivoting:
        # x[..., p] = q r: the tangent of the permuted columns (the permutation is constant).
        dx = dx[..., p[0]]
    # The permutation's tangent is float0 zeros.
    dp = [zero_of(p[0])] if pivoting else []
    if m < n:
        # x = q [r1 r2] with square r1: the square rule for r1, then dr2 = dq^H x2 + q^H dx2.
        x2, dx1, dx2, r1 = x[..., :, m:], dx[..., :, :m], dx[..., :, m:], r[..., :, :m]
        dq, dr1 = _thin_qr_jvp(q, r1, dx1)
        dr2 = _H(dq) @ x2 + _H(q) @ dx2
        return [q, r, *p], [dq, concatenate((dr1, dr2), dr1.ndim - 1), *dp]
    q_mn = q[..., :, :n] if full_matrices else q
    r_nn = r[..., :n, :n] if full_matrices else r
    dq, dr = _thin_qr_jvp(q_mn, r_nn, dx)
    if full_matrices and m != n:
        dq = _full_qr_tangent(q, q_mn, dq, n)
        zeros = full((*dr.shape[:-2], m - n, n), 0, dtype=aval_of(dr).dtype)
        dr = concatenate((dr, zeros), dr.ndim - 2)
    return [q, r, *p], [dq, dr, *dp]


jvp_rules.set(qr_p, _qr_jvp)
# JAX differentiates `qr`, not its LAPACK pieces.
not_differentiable(geqrf_p)
not_differentiable(householder_product_p)
_leading_batcher(geqrf_p)
_leading_batcher(householder_product_p)
_leading_batcher(qr_p)


__all__ = [
    "geqrf",
    "geqrf_p",
    "householder_product",
    "householder_product_p",
    "qr",
    "qr_p",
]
