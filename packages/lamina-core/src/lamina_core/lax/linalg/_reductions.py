"""The reductions of `jax.lax.linalg` to condensed forms: `hessenberg_p` (LAPACK's `gehrd`),
`tridiagonal_p` (`sytrd`/`hetrd`) and `schur_p` (`gees`), with JAX's checks and messages,
NumPy references and the leading-batch-dimension batching rule. None is differentiable, as in
JAX.

The Householder reflectors follow LAPACK's `larfg` convention: `H = I - tau v v^H` with
`v[0] = 1` (for the upper tridiagonal reduction the last entry), the rest of `v` stored in
the reduced matrix where the zeros would be. The references reduce unblocked, as LAPACK's
`gehd2`/`sytd2`, so the results agree with the LAPACK kernels up to rounding. `schur`'s
reference builds *a* Schur form (real quasi-triangular for a real operand) from the
eigenvectors: Schur forms are not unique, and the LAPACK kernel's may differ from it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import numpy as np

from lamina_core.interpreters import not_differentiable
from lamina_core.ir import AbstractValue, Primitive, ShapedArray, abstract_eval_rules, impl_rules
from lamina_core.lax import _checks as c
from lamina_core.lax._shape import asarray
from lamina_core.lax._types import Array
from lamina_core.lax.linalg._batching import _leading_batcher
from lamina_core.lax.linalg._eigh import real_dtype
from lamina_core.lax.linalg._primitives import _INEXACT_NAMES, _check_dtypes, _split_batch

hessenberg_p: Final = Primitive("hessenberg", multiple_results=True)
tridiagonal_p: Final = Primitive("tridiagonal", multiple_results=True)
schur_p: Final = Primitive("schur", multiple_results=True)


def _square_aval(name: str, x: AbstractValue) -> tuple[ShapedArray, tuple[int, ...], int]:
    aval = c.array_aval(name, x)
    batch, (core,) = _split_batch(name, [aval], [2])
    _check_dtypes(name, [aval], [_INEXACT_NAMES])
    return aval, batch, core[0] if core[0] == core[1] else -1


def _work(x: np.ndarray) -> np.ndarray:
    keep = x.dtype.kind == "c" or x.dtype == np.float64
    return x if keep else x.astype(np.float32)


def _per_matrix(x: np.ndarray, fn: Callable[[np.ndarray], tuple[np.ndarray, ...]]) -> list[Any]:
    """`fn` applied to every matrix of `x`, its results stacked over the batch dimensions."""
    batch = x.shape[:-2]
    results = [fn(x[idx]) for idx in np.ndindex(*batch)]
    if not results:
        probe = fn(np.eye(x.shape[-1], dtype=x.dtype))
        return [np.empty(batch + p.shape, p.dtype) for p in probe]
    return [
        np.stack([r[i] for r in results]).reshape(batch + results[0][i].shape)
        for i in range(len(results[0]))
    ]


def larfg(alpha: Any, x: np.ndarray) -> tuple[Any, np.ndarray, Any]:
    """LAPACK's elementary reflector: `tau`, `v` (without its unit entry) and `beta` with
    `(I - tau [1; v] [1; v]^H)^H [alpha; x] = [beta; 0]`, `beta` real."""
    xnorm = float(np.linalg.norm(x)) if x.size else 0.0
    if xnorm == 0.0 and np.imag(alpha) == 0:
        return alpha * 0, x, alpha
    beta = -np.copysign(np.hypot(abs(alpha), xnorm), np.real(alpha))
    tau = (beta - alpha) / beta
    return tau, x / (alpha - beta), beta


def _reflector(tau: Any, v: np.ndarray) -> np.ndarray:
    h: np.ndarray = np.eye(v.size, dtype=v.dtype) - tau * np.outer(v, np.conj(v))
    return h


# --- hessenberg -------------------------------------------------------------------------------


@abstract_eval_rules.register(hessenberg_p)
def _hessenberg_abstract_eval(a: AbstractValue) -> list[ShapedArray]:
    aval, batch, n = _square_aval("hessenberg", a)
    if n < 0:
        raise ValueError(
            "Argument to Hessenberg reduction must have shape [..., n, n], "
            f"got shape {aval.shape[-2:]}"
        )
    weak = aval.weak_type
    return [
        ShapedArray(aval.shape, aval.dtype, weak_type=weak),
        ShapedArray((*batch, n - 1), aval.dtype, weak_type=weak),
    ]


def _hessenberg_one(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = a.copy()
    n = a.shape[-1]
    taus = np.zeros(max(n - 1, 0), a.dtype)
    if not np.all(np.isfinite(a)):
        return np.full_like(a, np.nan), np.full_like(taus, np.nan)
    for i in range(n - 1):
        tau, v, beta = larfg(a[i + 1, i], a[i + 2 :, i])
        w = np.concatenate([np.ones(1, a.dtype), v]).astype(a.dtype)
        h = _reflector(tau, w)
        a[:, i + 1 :] = a[:, i + 1 :] @ h
        a[i + 1 :, i + 1 :] = np.conj(h).T @ a[i + 1 :, i + 1 :]
        a[i + 1, i], a[i + 2 :, i], taus[i] = beta, v, tau
    return a, taus


@impl_rules.register(hessenberg_p)
def _hessenberg_impl(a: np.ndarray) -> list[np.ndarray]:
    a = np.asarray(a)
    out = _per_matrix(_work(a), _hessenberg_one)
    return [o.astype(a.dtype) for o in out]


def hessenberg(a: Array) -> tuple[Array, Array]:
    """The upper Hessenberg reduction of each square matrix in `a`: the reduced matrix (upper
    triangle and first subdiagonal) with the Householder vectors below, and their scales."""
    h, taus = hessenberg_p.bind(a)
    return h, taus


# --- tridiagonal ------------------------------------------------------------------------------


@abstract_eval_rules.register(tridiagonal_p)
def _tridiagonal_abstract_eval(a: AbstractValue, *, lower: bool) -> list[ShapedArray]:
    aval, batch, n = _square_aval("tridiagonal", a)
    if n <= 0:
        raise ValueError(
            f"The input to tridiagonal must be a square matrix. Got shape {aval.shape[-2:]}."
        )
    weak, real = aval.weak_type, real_dtype(aval.dtype)
    return [
        ShapedArray(aval.shape, aval.dtype, weak_type=weak),
        ShapedArray((*batch, n), real, weak_type=weak),
        ShapedArray((*batch, n - 1), real, weak_type=weak),
        ShapedArray((*batch, n - 1), aval.dtype, weak_type=weak),
    ]


def _hermitian_from(a: np.ndarray, lower: bool) -> np.ndarray:
    tri = np.tril(a, -1) if lower else np.triu(a, 1)
    full: np.ndarray = tri + np.conj(tri).T + np.diag(np.real(np.diagonal(a))).astype(a.dtype)
    return full


def _tridiagonal_one(a: np.ndarray, lower: bool) -> tuple[np.ndarray, ...]:
    n = a.shape[-1]
    out = a.copy()
    work = _hermitian_from(a, lower)
    real = real_dtype(a.dtype)
    d, e = np.zeros(n, real), np.zeros(n - 1, real)
    taus = np.zeros(n - 1, a.dtype)
    if not np.all(np.isfinite(work)):
        nan = np.nan
        return np.full_like(a, nan), d + nan, e + nan, taus + nan
    steps = range(n - 1) if lower else range(n - 2, -1, -1)
    for k in steps:
        if lower:
            tau, v, beta = larfg(work[k + 1, k], work[k + 2 :, k])
            w = np.concatenate([np.ones(1, a.dtype), v]).astype(a.dtype)
            block = slice(k + 1, n)
        else:
            tau, v, beta = larfg(work[k, k + 1], work[:k, k + 1])
            w = np.concatenate([v, np.ones(1, a.dtype)]).astype(a.dtype)
            block = slice(0, k + 1)
        h = _reflector(tau, w)
        work[block, block] = np.conj(h).T @ work[block, block] @ h
        e[k], taus[k] = np.real(beta), tau
        if lower:
            out[k + 1, k], out[k + 2 :, k] = beta, v
        else:
            out[k, k + 1], out[:k, k + 1] = beta, v
    d[:] = np.real(np.diagonal(work))
    out[np.diag_indices(n)] = d
    return out, d, e, taus


@impl_rules.register(tridiagonal_p)
def _tridiagonal_impl(a: np.ndarray, *, lower: bool) -> list[np.ndarray]:
    a = np.asarray(a)
    out = _per_matrix(_work(a), lambda m: _tridiagonal_one(m, lower))
    real = real_dtype(a.dtype)
    return [
        out[0].astype(a.dtype),
        out[1].astype(real),
        out[2].astype(real),
        out[3].astype(a.dtype),
    ]


def tridiagonal(a: Array, *, lower: bool = True) -> tuple[Array, Array, Array, Array]:
    """The reduction of each Hermitian matrix in `a` (its `lower` or upper triangle) to
    tridiagonal form: the reduced matrix holding the Householder vectors, the diagonal `d`,
    the off-diagonal `e` and the reflectors' scales `taus`."""
    out = tridiagonal_p.bind(asarray(a), lower=lower)
    arr, d, e, taus = out
    return arr, d, e, taus


# --- schur ------------------------------------------------------------------------------------


@abstract_eval_rules.register(schur_p)
def _schur_abstract_eval(
    x: AbstractValue, *, compute_schur_vectors: bool, sort_eig_vals: bool, select_callable: Any
) -> list[ShapedArray]:
    aval, _, n = _square_aval("schur", x)
    if n < 0:
        raise ValueError(
            f"The input to schur must be a square matrix. Got shape {aval.shape[-2:]}."
        )
    out = ShapedArray(aval.shape, aval.dtype, weak_type=aval.weak_type)
    return [out, out] if compute_schur_vectors else [out]


def _real_basis(w: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Real columns spanning the same invariant subspaces as `v` (pairs become Re, Im)."""
    basis = np.real(v).copy()
    j = 0
    while j < w.size:
        if np.imag(w[j]) != 0 and j + 1 < w.size:
            basis[:, j], basis[:, j + 1] = np.real(v[:, j]), np.imag(v[:, j])
            j += 2
        else:
            j += 1
    return basis


def _schur_one(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = a.shape[-1]
    if not np.all(np.isfinite(a)):
        return np.full_like(a, np.nan), np.full_like(a, np.nan)
    if n == 0:
        return a.copy(), a.copy()
    w, v = np.linalg.eig(a)
    basis = v if a.dtype.kind == "c" else _real_basis(w, v)
    q, _ = np.linalg.qr(basis.astype(a.dtype))
    t = np.conj(q).T @ a @ q
    if a.dtype.kind == "c":
        t = np.triu(t)
    else:
        t = np.triu(t, -1)
        sub = np.abs(np.diagonal(t, -1)) <= np.finfo(a.dtype).eps * np.abs(a).max() * n
        t[np.arange(1, n)[sub], np.arange(n - 1)[sub]] = 0
    return t.astype(a.dtype), q.astype(a.dtype)


@impl_rules.register(schur_p)
def _schur_impl(
    x: np.ndarray, *, compute_schur_vectors: bool, sort_eig_vals: bool, select_callable: Any
) -> list[np.ndarray]:
    x = np.asarray(x)
    if sort_eig_vals:
        raise NotImplementedError("The sort feature of LAPACK's gees routine is not implemented.")
    t, q = _per_matrix(_work(x), _schur_one)
    out = [t.astype(x.dtype)]
    if compute_schur_vectors:
        out.append(q.astype(x.dtype))
    return out


def schur(
    x: Array,
    *,
    compute_schur_vectors: bool = True,
    sort_eig_vals: bool = False,
    select_callable: Callable[..., Any] | None = None,
) -> Any:
    """The Schur decomposition `x = Q U Q^H` of each square matrix in `x`: `(U, Q)`, or `U`
    alone without `compute_schur_vectors`. `sort_eig_vals` and `select_callable` are unused
    (sorting is not implemented), as in JAX."""
    return schur_p.bind(
        x,
        compute_schur_vectors=compute_schur_vectors,
        sort_eig_vals=sort_eig_vals,
        select_callable=select_callable,
    )


_leading_batcher(hessenberg_p)
_leading_batcher(tridiagonal_p)
_leading_batcher(schur_p)


# JAX 0.10.2 has no derivative for these: differentiating through them raises its error.
not_differentiable(hessenberg_p)
not_differentiable(tridiagonal_p)
not_differentiable(schur_p)

__all__ = ["hessenberg", "hessenberg_p", "schur", "schur_p", "tridiagonal", "tridiagonal_p"]
