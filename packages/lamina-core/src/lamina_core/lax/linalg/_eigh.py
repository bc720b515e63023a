"""`eigh_p`, the eigendecomposition of Hermitian (real symmetric) matrices, and its public
`eigh`: JAX's checks and messages, a NumPy reference (LAPACK's `syevd`/`heevd` through NumPy,
as the CPU kernel), the perturbation-theory jvp rule of JAX (distinct eigenvalues) and the
leading-batch-dimension batching rule.

`eigh_p` reads one triangle of its operand (`lower`); its results are the eigenvectors, with
the operand's dtype, and the ascending eigenvalues, with its real dtype. A batch element whose
decomposition fails is NaN.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from lamina_core.interpreters import instantiate_zeros, jvp_rules
from lamina_core.ir import AbstractValue, Primitive, ShapedArray, abstract_eval_rules, impl_rules
from lamina_core.lax import _checks as c
from lamina_core.lax._ad_common import aval_of
from lamina_core.lax._elementwise import integer_pow, real
from lamina_core.lax._linalg import batch_matmul
from lamina_core.lax._linalg import dot as dot_
from lamina_core.lax._shape import asarray, iota
from lamina_core.lax._types import Array
from lamina_core.lax.linalg._ad import _eye, _highest
from lamina_core.lax.linalg._batching import _leading_batcher
from lamina_core.lax.linalg._primitives import (
    _H,
    _INEXACT_NAMES,
    _check_dtypes,
    _split_batch,
    _symmetrize,
)

eigh_p: Final = Primitive("eigh", multiple_results=True)


def real_dtype(dtype: np.dtype) -> np.dtype:
    """The real counterpart of an inexact dtype (itself for a real one)."""
    return np.dtype(np.zeros((), dtype).real.dtype) if dtype.kind == "c" else dtype


def _subset_size(n: int, subset_by_index: tuple[int, int] | None) -> int:
    return n if subset_by_index is None else subset_by_index[1] - subset_by_index[0]


@abstract_eval_rules.register(eigh_p)
def _eigh_abstract_eval(
    x: AbstractValue,
    *,
    lower: bool,
    sort_eigenvalues: bool,
    subset_by_index: tuple[int, int] | None,
    algorithm: Any,
) -> list[ShapedArray]:
    aval = c.array_aval("eigh", x)
    _check_dtypes("eigh", [aval], [_INEXACT_NAMES])
    batch, (core,) = _split_batch("eigh", [aval], [2])
    if core[0] != core[-1]:
        raise ValueError(
            "Argument to symmetric eigendecomposition must have shape [..., n, n], "
            f"got shape {core}"
        )
    n = core[0]
    d = _subset_size(n, subset_by_index)
    weak = aval.weak_type
    return [
        ShapedArray((*batch, n, d), aval.dtype, weak_type=weak),
        ShapedArray((*batch, d), real_dtype(aval.dtype), weak_type=weak),
    ]


def _eigh_one(a: np.ndarray, lower: bool) -> tuple[np.ndarray, np.ndarray]:
    try:
        w, v = np.linalg.eigh(a, UPLO="L" if lower else "U")
    except np.linalg.LinAlgError:
        n = a.shape[-1]
        return np.full((n, n), np.nan, a.dtype), np.full(n, np.nan, real_dtype(a.dtype))
    return v, w


@impl_rules.register(eigh_p)
def _eigh_impl(
    x: np.ndarray,
    *,
    lower: bool,
    sort_eigenvalues: bool,
    subset_by_index: tuple[int, int] | None,
    algorithm: Any,
) -> list[np.ndarray]:
    x = np.asarray(x)
    n = x.shape[-1]
    if subset_by_index not in (None, (0, n)):
        raise NotImplementedError("subset_by_index not supported on CPU and GPU")
    batch = x.shape[:-2]
    work = x if x.dtype.kind == "c" or x.dtype == np.float64 else x.astype(np.float32)
    v = np.empty(work.shape, work.dtype)
    w = np.empty((*batch, n), real_dtype(work.dtype))
    for idx in np.ndindex(*batch):
        v[idx], w[idx] = _eigh_one(work[idx], lower)
    return [v.astype(x.dtype), w.astype(real_dtype(x.dtype))]


def eigh(
    x: Array,
    *,
    lower: bool = True,
    symmetrize_input: bool = True,
    sort_eigenvalues: bool = True,
    subset_by_index: tuple[int, int] | None = None,
) -> tuple[Array, Array]:
    """Eigenvectors `v` and ascending eigenvalues `w` of each Hermitian matrix in `x`
    (`..., n, n`), `x @ v[..., :, i] = w[..., i] * v[..., :, i]`. With `symmetrize_input`,
    those of `(x + x^H) / 2`; without it only the `lower` (or upper) triangle is read.
    `subset_by_index=(start, end)` asks for eigenvalues `start` to `end` only (not on CPU)."""
    x = asarray(x)
    if symmetrize_input:
        x = _symmetrize(x)
    v, w = eigh_p.bind(
        x,
        lower=lower,
        sort_eigenvalues=sort_eigenvalues,
        subset_by_index=subset_by_index,
        algorithm=None,
    )
    return v, w


def extract_diagonal(s: Array) -> Array:
    """The (batched) diagonal of `s`, gathered with an iota as JAX's `_extract_diagonal`."""
    i = iota(np.dtype(np.int32), min(s.shape[-2], s.shape[-1]))
    return s[..., i, i]


def _eigh_jvp(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    lower: bool,
    sort_eigenvalues: bool,
    subset_by_index: tuple[int, int] | None,
    algorithm: Any,
) -> tuple[Any, Any]:
    (a,), (a_dot,) = primals, tangents
    aval = aval_of(a)
    n = aval.shape[-1]
    if subset_by_index not in (None, (0, n)):
        raise NotImplementedError("Derivatives not defined for partial eigen decomposition.")
    a_dot = instantiate_zeros(a_dot)
    v, w_real = eigh_p.bind(
        _symmetrize(a),
        lower=lower,
        sort_eigenvalues=sort_eigenvalues,
        subset_by_index=subset_by_index,
        algorithm=algorithm,
    )
    w = w_real.astype(aval.dtype)
    eye_n = _eye(aval.dtype, n)
    # The identity on the diagonal keeps 1/(w_j - w_i) finite there; it is then removed.
    f_mat = integer_pow(eye_n + w[..., np.newaxis, :] - w[..., np.newaxis], -1) - eye_n
    highest = _highest()

    def dot(x: Any, y: Any) -> Any:
        if aval.ndim == 2:
            return dot_(x, y, precision=highest)
        return batch_matmul(x, y, precision=highest)

    vdag_adot_v = dot(dot(_H(v), a_dot), v)
    dv = dot(v, f_mat * vdag_adot_v)
    complex_ = c.kind_of(aval_of(vdag_adot_v).dtype) == "c"
    dw = extract_diagonal(real(vdag_adot_v) if complex_ else vdag_adot_v)  # `jnp.real`
    return [v, w_real], [dv, dw]


jvp_rules.set(eigh_p, _eigh_jvp)
_leading_batcher(eigh_p)


__all__ = ["eigh", "eigh_p"]
