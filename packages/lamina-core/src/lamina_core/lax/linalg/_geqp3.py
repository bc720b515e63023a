"""`geqp3_p`: LAPACK's column-pivoted Householder QR, `a[:, jpvt] = q @ r`, with JAX 0.10.2's
checks and messages, a NumPy reference that follows LAPACK's `?laqp2` step for step (so that
its pivots and reflectors are LAPACK's, not merely a valid factorization), and
leading-batch-dimension batching. It has no derivative: JAX differentiates `qr`, not its
LAPACK pieces.

Pivots are 1-based, as LAPACK's. A nonzero entry of the input `jpvt` would pin its column to
the front; JAX's callers pass zeros (every column free), the only case the reference handles.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from lamina_core.interpreters import not_differentiable
from lamina_core.ir import AbstractValue, Primitive, ShapedArray, abstract_eval_rules, impl_rules
from lamina_core.lax import _checks as c
from lamina_core.lax._types import Array
from lamina_core.lax.linalg._batching import _leading_batcher
from lamina_core.lax.linalg._primitives import _INEXACT_NAMES, _check_dtypes, _split_batch

geqp3_p: Final = Primitive("geqp3", multiple_results=True)


@abstract_eval_rules.register(geqp3_p)
def _geqp3_abstract_eval(
    a: AbstractValue, jpvt: AbstractValue, *, use_magma: object
) -> list[ShapedArray]:
    avals = [c.array_aval("geqp3", a), c.array_aval("geqp3", jpvt)]
    _check_dtypes("geqp3", avals, [_INEXACT_NAMES, "integer"])
    batch, ((m, n), _) = _split_batch("geqp3", avals, [2, 1])
    a_aval, jpvt_aval = avals
    # JAX's standard weak-type rule: weak only when every operand is.
    weak = a_aval.weak_type and jpvt_aval.weak_type
    return [
        ShapedArray(a_aval.shape, a_aval.dtype, weak_type=weak),
        ShapedArray(jpvt_aval.shape, jpvt_aval.dtype, weak_type=weak),
        ShapedArray((*batch, min(m, n)), a_aval.dtype, weak_type=weak),
    ]


def _reflector(x: np.ndarray) -> tuple[np.ndarray, complex | float, complex | float]:
    """LAPACK's `?larfg` on the column `x`: `(v, tau, beta)` with `v[0] == 1` and
    `(I - tau v v^H)^H x = (beta, 0, ..., 0)`, `beta` real."""
    alpha, rest = x[0], x[1:]
    rest_norm = float(np.linalg.norm(rest)) if rest.size else 0.0
    v = np.zeros_like(x)
    v[0] = 1
    if rest_norm == 0 and np.imag(alpha) == 0:
        return v, 0.0, alpha
    beta = -np.copysign(float(np.hypot(abs(alpha), rest_norm)), float(np.real(alpha)))
    tau = (beta - np.real(alpha)) / beta - 1j * np.imag(alpha) / beta
    if x.dtype.kind != "c":
        tau = tau.real
    v[1:] = rest / (alpha - beta)
    return v, tau, beta


def _geqp3_one(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One matrix's `(a_out, jpvt, taus)`, as `?geqp3` with every column free (`?laqp2`)."""
    a = a.copy()
    m, n = a.shape
    k = min(m, n)
    jpvt = np.arange(1, n + 1)
    taus = np.zeros(k, a.dtype)
    # Column norms of the trailing rows, downdated each step; `exact` keeps the last
    # recomputed values, to tell when the downdate has lost too much precision.
    norms = np.linalg.norm(a, axis=0).astype(np.float64)
    exact = norms.copy()
    tol = np.sqrt(np.finfo(a.dtype).eps)
    for i in range(k):
        p = i + int(np.argmax(norms[i:]))
        if p != i:
            a[:, [i, p]] = a[:, [p, i]]
            jpvt[[i, p]] = jpvt[[p, i]]
            norms[p], exact[p] = norms[i], exact[i]
        v, tau, beta = _reflector(a[i:, i])
        a[i, i] = beta
        a[i + 1 :, i] = v[1:]
        taus[i] = tau
        if i + 1 < n:
            block = a[i:, i + 1 :]
            block -= np.conj(tau) * np.outer(v, np.conj(v) @ block)
        for j in range(i + 1, n):
            if norms[j] == 0:
                continue
            ratio = abs(a[i, j]) / norms[j]
            shrink = max(0.0, 1.0 - ratio * ratio)
            if shrink * (norms[j] / exact[j]) ** 2 <= tol:
                norms[j] = float(np.linalg.norm(a[i + 1 :, j])) if i + 1 < m else 0.0
                exact[j] = norms[j]
            else:
                norms[j] *= np.sqrt(shrink)
    return a, jpvt, taus


@impl_rules.register(geqp3_p)
def _geqp3_impl(a: np.ndarray, jpvt: np.ndarray, *, use_magma: object) -> list[np.ndarray]:
    a, jpvt = np.asarray(a), np.asarray(jpvt)
    if np.any(jpvt != 0):
        raise NotImplementedError(
            "geqp3's reference evaluator supports only free columns (an all-zero jpvt)."
        )
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    # In double precision, so that the pivots, decided by comparing norms, are LAPACK's.
    wide = np.dtype(np.complex128 if a.dtype.kind == "c" else np.float64)
    out = np.empty(a.shape, wide)
    pivots = np.empty(jpvt.shape, jpvt.dtype)
    taus = np.empty((*batch, min(m, n)), wide)
    for idx in np.ndindex(*batch):
        out[idx], pivots[idx], taus[idx] = _geqp3_one(a[idx].astype(wide))
    return [out.astype(a.dtype), pivots, taus.astype(a.dtype)]


def geqp3(a: Array, jpvt: Array, *, use_magma: bool | None = None) -> tuple[Array, Array, Array]:
    """LAPACK's column-pivoted QR of each matrix in `a` (`..., m, n`): `(a_out, jpvt_out,
    taus)`, `r` in the upper triangle of `a_out`, the Householder reflectors below it (scaled
    by `taus`), and the 1-based pivots with `a[:, jpvt_out - 1] = q @ r`. `jpvt` (`..., n`,
    integer) marks columns to keep in front; pass zeros to let every column move."""
    out, pivots, taus = geqp3_p.bind(a, jpvt, use_magma=use_magma)
    return out, pivots, taus


not_differentiable(geqp3_p)
_leading_batcher(geqp3_p)


__all__ = ["geqp3", "geqp3_p"]
