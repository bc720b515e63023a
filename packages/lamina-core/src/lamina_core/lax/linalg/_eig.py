"""`eig_p`, the eigendecomposition of general square matrices, and its public `eig`: JAX's
checks and messages, a NumPy reference (LAPACK's `geev` through NumPy, as the CPU kernel), the
perturbation-theory jvp rule of JAX and the leading-batch-dimension batching rule.

`eig_p` returns the eigenvalues `w` (`..., n`), then the left eigenvectors if asked, then the
right ones if asked, all complex (the operand's complex counterpart). As LAPACK's `geev`
normalizes them, each eigenvector has unit 2-norm and its largest-magnitude component real.
The reference takes the right eigenvectors from NumPy's `geev` and the left ones from the
rows of the right eigenvector matrix's inverse, normalized in the same way (for a real
eigenvalue their sign may differ from LAPACK's). A batch element whose decomposition fails is
NaN.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from lamina_core.interpreters import instantiate_zeros, jvp_rules
from lamina_core.ir import (
    AbstractValue,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    dtypes,
    impl_rules,
)
from lamina_core.lax import _checks as c
from lamina_core.lax._ad_common import aval_of
from lamina_core.lax._elementwise import abs as abs_
from lamina_core.lax._elementwise import complex as complex_
from lamina_core.lax._elementwise import eq, reciprocal
from lamina_core.lax._linalg import batch_matmul
from lamina_core.lax._linalg import dot as dot_
from lamina_core.lax._reductions import argmax
from lamina_core.lax._shape import broadcasted_iota, expand_dims
from lamina_core.lax._types import Array
from lamina_core.lax.linalg._ad import _eye, _highest
from lamina_core.lax.linalg._batching import _leading_batcher
from lamina_core.lax.linalg._eigh import extract_diagonal
from lamina_core.lax.linalg._enums import EigImplementation
from lamina_core.lax.linalg._primitives import _H, _INEXACT_NAMES, _T, _check_dtypes, _split_batch
from lamina_core.lax.linalg._solve import solve

eig_p: Final = Primitive("eig", multiple_results=True)

_INT32: Final = np.dtype(np.int32)


def complex_dtype(dtype: np.dtype) -> np.dtype:
    """The complex counterpart of an inexact dtype (JAX's `to_complex_dtype`)."""
    if dtype.kind == "c":
        return dtype
    wide = dtype == np.float64
    return dtypes.canonicalize_dtype(np.dtype(np.complex128 if wide else np.complex64))


@abstract_eval_rules.register(eig_p)
def _eig_abstract_eval(
    x: AbstractValue,
    *,
    compute_left_eigenvectors: bool,
    compute_right_eigenvectors: bool,
    enable_eigvec_derivs: bool,
    implementation: EigImplementation | None,
) -> list[ShapedArray]:
    aval = c.array_aval("eig", x)
    batch, (core,) = _split_batch("eig", [aval], [2])
    _check_dtypes("eig", [aval], [_INEXACT_NAMES])
    if core[0] != core[1]:
        raise ValueError(f"The input to eig must be a square matrix. Got shape {core}.")
    dtype = complex_dtype(aval.dtype)
    weak = aval.weak_type
    count = int(compute_left_eigenvectors) + int(compute_right_eigenvectors)
    w = ShapedArray((*batch, core[0]), dtype, weak_type=weak)
    return [w] + [ShapedArray(batch + core, dtype, weak_type=weak) for _ in range(count)]


def normalize_like_geev(v: np.ndarray) -> np.ndarray:
    """Columns of `v` scaled to unit 2-norm with the largest-magnitude entry real, as `geev`."""
    v = v / np.linalg.norm(v, axis=0, keepdims=True)
    k = np.argmax(np.abs(v), axis=0)
    top = v[k, np.arange(v.shape[1])]
    phase = np.where(top == 0, 1, np.conj(top) / np.where(top == 0, 1, np.abs(top)))
    out: np.ndarray = v * phase[np.newaxis, :]
    return out


def _eig_one(a: np.ndarray, left: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = a.shape[-1]
    cdt = complex_dtype(a.dtype)
    nan = np.full((n, n), np.nan + np.nan * 1j, cdt)
    if not np.all(np.isfinite(a)):
        return np.full(n, np.nan + np.nan * 1j, cdt), nan, nan
    w, vr = np.linalg.eig(a)
    w, vr = w.astype(cdt), vr.astype(cdt)
    vl = nan
    if left and n:
        try:
            vl = normalize_like_geev(np.conj(np.linalg.inv(vr)).T).astype(cdt)
        except np.linalg.LinAlgError:
            vl = nan
    return w, vl, vr


@impl_rules.register(eig_p)
def _eig_impl(
    x: np.ndarray,
    *,
    compute_left_eigenvectors: bool,
    compute_right_eigenvectors: bool,
    enable_eigvec_derivs: bool,
    implementation: EigImplementation | None,
) -> list[np.ndarray]:
    x = np.asarray(x)
    if implementation and implementation != EigImplementation.LAPACK:
        raise ValueError("Only the lapack implementation is supported on CPU.")
    batch, n = x.shape[:-2], x.shape[-1]
    work = x if x.dtype.kind == "c" or x.dtype == np.float64 else x.astype(np.float32)
    cdt = complex_dtype(x.dtype)
    w = np.empty((*batch, n), cdt)
    vl = np.empty(x.shape, cdt)
    vr = np.empty(x.shape, cdt)
    for idx in np.ndindex(*batch):
        w[idx], vl[idx], vr[idx] = _eig_one(work[idx], compute_left_eigenvectors)
    out = [w]
    if compute_left_eigenvectors:
        out.append(vl)
    if compute_right_eigenvectors:
        out.append(vr)
    return out


def eig(
    x: Array,
    *,
    compute_left_eigenvectors: bool = True,
    compute_right_eigenvectors: bool = True,
    enable_eigvec_derivs: bool = False,
    implementation: EigImplementation | None = None,
    use_magma: bool | None = None,
) -> list[Array]:
    """Eigenvalues `w` of each square matrix in `x` (`..., n, n`), followed by its left
    eigenvectors (`u^H x = w u^H`) and right eigenvectors (`x v = w v`) when asked for; each
    eigenvector has unit 2-norm and a real largest-magnitude component (LAPACK's `geev`).
    `enable_eigvec_derivs` allows differentiating the eigenvectors (valid only for distinct
    eigenvalues); `use_magma` is JAX's deprecated spelling of `implementation`."""
    if use_magma is not None:
        warnings.warn(
            "use_magma is deprecated, please use implementation=EigImplementation.MAGMA instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        implementation = EigImplementation.MAGMA if use_magma else EigImplementation.LAPACK
    out = eig_p.bind(
        x,
        compute_left_eigenvectors=compute_left_eigenvectors,
        compute_right_eigenvectors=compute_right_eigenvectors,
        enable_eigvec_derivs=enable_eigvec_derivs,
        implementation=implementation,
    )
    return list(out)


def _eig_vec_jvp(dot: Any, w: Any, v: Any, da: Any) -> tuple[Any, Any]:
    """Tangents of eigenvalues and `geev`-normalized eigenvectors (distinct eigenvalues)."""
    n = aval_of(w).shape[-1]
    eye_n = _eye(np.dtype(aval_of(w).dtype), n)
    f_mat = reciprocal(eye_n + w[..., np.newaxis, :] - w[..., np.newaxis]) - eye_n
    p = dot(solve(v, da), v)
    dw = extract_diagonal(p)
    u = dot(v, f_mat * p)
    # dv_j = u_j + c_j v_j; c_j's real part keeps the norm, its imaginary part keeps the
    # largest-magnitude component k_j real.
    ndim = aval_of(v).ndim
    k = argmax(abs_(v), ndim - 2, _INT32)
    picked = eq(broadcasted_iota(_INT32, aval_of(v).shape, ndim - 2), expand_dims(k, (ndim - 2,)))
    mask = picked.astype(aval_of(v).dtype)
    re = -(v.conj() * u).sum(-2).real
    im = -(mask * u).sum(-2).imag / (mask * v).sum(-2).real
    coef = complex_(re, im)
    return dw, u + v * expand_dims(coef, (ndim - 2,))


def _eig_jvp(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    compute_left_eigenvectors: bool,
    compute_right_eigenvectors: bool,
    enable_eigvec_derivs: bool,
    implementation: EigImplementation | None,
) -> tuple[list[Any], list[Any]]:
    (a,), (da,) = primals, tangents
    if (compute_left_eigenvectors or compute_right_eigenvectors) and not enable_eigvec_derivs:
        raise NotImplementedError(
            "Derivatives of non-symmetric eigenvectors are only valid under assumptions on "
            "the input that JAX cannot check (see the enable_eigvec_derivs argument to "
            "jax.lax.linalg.eig). Pass enable_eigvec_derivs=True to jax.lax.linalg.eig to opt "
            "in. See https://github.com/jax-ml/jax/issues/2748 for discussion."
        )
    outs = eig(
        a,
        compute_left_eigenvectors=compute_left_eigenvectors,
        compute_right_eigenvectors=True,
        enable_eigvec_derivs=enable_eigvec_derivs,
        implementation=implementation,
    )
    w, vr = outs[0], outs[-1]
    highest = _highest()
    batched = aval_of(a).ndim != 2

    def dot(x: Any, y: Any) -> Any:
        if batched:
            return batch_matmul(x, y, precision=highest)
        return dot_(x, y, precision=highest)

    da = instantiate_zeros(da).astype(aval_of(vr).dtype)
    if not (compute_left_eigenvectors or compute_right_eigenvectors):
        return [w], [(solve(vr, da) * _T(vr)).sum(-1)]
    dw, dvr = _eig_vec_jvp(dot, w, vr, da)
    primals_out, tangents_out = [w], [dw]
    if compute_left_eigenvectors:
        vl = outs[1]
        _, dvl = _eig_vec_jvp(dot, w.conj(), vl, _H(da))
        primals_out.append(vl)
        tangents_out.append(dvl)
    if compute_right_eigenvectors:
        primals_out.append(vr)
        tangents_out.append(dvr)
    return primals_out, tangents_out


jvp_rules.set(eig_p, _eig_jvp)
_leading_batcher(eig_p)


__all__ = ["eig", "eig_p"]
