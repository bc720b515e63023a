"""`svd_p`, the singular value decomposition, and its public `svd`: JAX's checks and
messages, a NumPy reference (LAPACK's `gesdd` through NumPy, as the CPU kernel), JAX's jvp
rule (square or reduced factors; full rectangular ones are not differentiable, as in JAX) and
the leading-batch-dimension batching rule.

`svd_p`'s results are the singular values (descending, the operand's real dtype) and, with
`compute_uv`, `u` and `vt` (`x = u @ diag(s) @ vt`); a batch element whose decomposition fails
is NaN.
"""

from __future__ import annotations

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
from lamina_core.lax._array_helpers import indexed_update, wrap_negative
from lamina_core.lax._dot_types import Precision
from lamina_core.lax._gather_scatter import ScatterDimensionNumbers, scatter
from lamina_core.lax._joining import concatenate
from lamina_core.lax._linalg import dot_general
from lamina_core.lax._shape import expand_dims, iota, shape_of, squeeze
from lamina_core.lax._structural import _convert_element_type, broadcast_in_dim, full
from lamina_core.lax._types import Array
from lamina_core.lax.linalg._ad import _eye
from lamina_core.lax.linalg._batching import _leading_batcher
from lamina_core.lax.linalg._eigh import extract_diagonal, real_dtype
from lamina_core.lax.linalg._primitives import _H, _INEXACT_NAMES, _T, _check_dtypes, _split_batch

svd_p: Final = Primitive("svd", multiple_results=True)


def svd_shapes(
    m: int, n: int, full_matrices: bool, compute_uv: bool, subset_by_index: Any
) -> list[tuple[int, ...]]:
    """The core shapes of `s` and, with `compute_uv`, of `u` and `vt`."""
    rank = min(m, n)
    if subset_by_index is not None:
        if full_matrices and tuple(subset_by_index) != (0, rank):
            raise ValueError("full_matrices and subset_by_index cannot both be set")
        rank = min(rank, subset_by_index[1] - subset_by_index[0])
    if not compute_uv:
        return [(rank,)]
    return [(rank,), (m, m if full_matrices else rank), (n if full_matrices else rank, n)]


@abstract_eval_rules.register(svd_p)
def _svd_abstract_eval(
    x: AbstractValue,
    *,
    full_matrices: bool,
    compute_uv: bool,
    subset_by_index: tuple[int, int] | None,
    algorithm: Any,
) -> list[ShapedArray]:
    aval = c.array_aval("svd", x)
    _check_dtypes("svd", [aval], [_INEXACT_NAMES])
    batch, ((m, n),) = _split_batch("svd", [aval], [2])
    shapes = svd_shapes(m, n, full_matrices, compute_uv, subset_by_index)
    dts = [real_dtype(aval.dtype), aval.dtype, aval.dtype]
    weak = aval.weak_type
    return [
        ShapedArray((*batch, *shape), dt, weak_type=weak)
        for shape, dt in zip(shapes, dts, strict=False)
    ]


def _svd_one(a: np.ndarray, full_matrices: bool) -> tuple[np.ndarray, ...]:
    try:
        u, s, vt = np.linalg.svd(a, full_matrices=full_matrices)
    except np.linalg.LinAlgError:
        m, n = a.shape
        k = min(m, n)
        u = np.full((m, m if full_matrices else k), np.nan, a.dtype)
        vt = np.full((n if full_matrices else k, n), np.nan, a.dtype)
        s = np.full(k, np.nan, real_dtype(a.dtype))
    return s, u, vt


def _empty_svd_reference(x: np.ndarray, full_matrices: bool, compute_uv: bool) -> list[np.ndarray]:
    *batch, m, n = x.shape
    s = np.zeros((*batch, 0), real_dtype(x.dtype))
    if not compute_uv:
        return [s]
    if full_matrices:
        size = max(m, n)
        u = np.broadcast_to(np.eye(size, dtype=x.dtype), (*batch, size, size)).copy()
    else:
        u = np.zeros((*batch, m, n), x.dtype)
    v = np.zeros((*batch, 0, 0), x.dtype)
    if m < n:
        u, v = v, u
    return [s, u, v]


@impl_rules.register(svd_p)
def _svd_impl(
    x: np.ndarray,
    *,
    full_matrices: bool,
    compute_uv: bool,
    subset_by_index: tuple[int, int] | None,
    algorithm: Any,
) -> list[np.ndarray]:
    x = np.asarray(x)
    *batch, m, n = x.shape
    if subset_by_index not in (None, (0, min(m, n))):
        raise NotImplementedError("subset_by_index not implemented for CPU and GPU")
    if m == 0 or n == 0:
        return _empty_svd_reference(x, full_matrices, compute_uv)
    work = x if x.dtype.kind == "c" or x.dtype == np.float64 else x.astype(np.float32)
    shapes = svd_shapes(m, n, full_matrices, True, None)
    outs = [
        np.empty((*batch, *shape), dt)
        for shape, dt in zip(shapes, [real_dtype(work.dtype), work.dtype, work.dtype], strict=True)
    ]
    for idx in np.ndindex(*batch):
        for out, part in zip(outs, _svd_one(work[idx], full_matrices), strict=True):
            out[idx] = part
    dts = [real_dtype(x.dtype), x.dtype, x.dtype]
    result = [o.astype(dt) for o, dt in zip(outs, dts, strict=True)]
    return result if compute_uv else result[:1]


def svd(
    x: Array,
    *,
    full_matrices: bool = True,
    compute_uv: bool = True,
    subset_by_index: tuple[int, int] | None = None,
    algorithm: Any = None,
) -> Any:
    """The singular value decomposition `x = u @ diag(s) @ vt` of each matrix in `x` (`..., m,
    n`): `(u, s, vt)` with `compute_uv`, else `s` (descending, real). Without `full_matrices`
    `u` and `vt` keep `min(m, n)` columns / rows."""
    result = svd_p.bind(
        x,
        full_matrices=full_matrices,
        compute_uv=compute_uv,
        subset_by_index=subset_by_index,
        algorithm=algorithm,
    )
    if compute_uv:
        s, u, v = result
        return u, s, v
    (s,) = result
    return s


# --- jvp --------------------------------------------------------------------------------------


def _mm(a: Any, b: Any) -> Any:
    """`jnp.matmul(a, b, precision=HIGHEST)` of matrices with one batch shape: a batched
    `dot_general`, the batch dimensions of size 1 squeezed out and restored."""
    # JAX computes this rule under `default_matmul_precision("float32")`: HIGHEST products.
    dtype, weak = dtypes.result_type(a, b, return_weak_type_flag=True)
    ones = tuple(i for i, d in enumerate(shape_of(a)[:-2]) if d == 1)
    if ones:
        a, b = squeeze(a, ones), squeeze(b, ones)
    batch = tuple(range(len(shape_of(a)) - 2))
    contract = ((len(batch) + 1,), (len(batch),))
    out = dot_general(a, b, (contract, (batch, batch)), Precision.HIGHEST, dtype)
    return _convert_element_type(expand_dims(out, ones), dtype, weak)


def construct_diagonal(s: Array) -> Array:
    """A (batched) diagonal matrix of `s`, scattered as JAX's `_construct_diagonal`
    (`zeros.at[..., i, i].set(s)`)."""
    n = s.shape[-1]
    i = iota(np.dtype(np.int32), n)
    zeros = full((*s.shape, n), 0, aval_of(s).dtype)
    rows, cols = wrap_negative(i, n), wrap_negative(i, n)
    indices = concatenate([broadcast_in_dim(j, (n, 1), (0,)) for j in (rows, cols)], 1)
    nb = len(s.shape) - 1
    dnums = ScatterDimensionNumbers(
        update_window_dims=tuple(range(nb)),
        inserted_window_dims=(nb, nb + 1),
        scatter_dims_to_operand_dims=(nb, nb + 1),
    )
    return indexed_update(zeros, indices, s, dnums, s.shape, scatter, static=False)


def _svd_jvp(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    full_matrices: bool,
    compute_uv: bool,
    subset_by_index: tuple[int, int] | None,
    algorithm: Any,
) -> tuple[Any, Any]:
    (a,), (da,) = primals, tangents
    da = instantiate_zeros(da)
    dtype = aval_of(a).dtype
    s, u, vt = svd_p.bind(
        a,
        full_matrices=False,
        compute_uv=True,
        subset_by_index=subset_by_index,
        algorithm=algorithm,
    )
    m, n = a.shape[-2:]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(
            "Singular value decomposition JVP not implemented for full matrices"
        )
    ut, v = _H(u), _H(vt)
    s_dim = s[..., None, :]
    ds_mat = _mm(_mm(ut, da), v)
    ds = extract_diagonal(ds_mat.real)
    if not compute_uv:
        return [s], [ds]
    s_diffs = (s_dim + _T(s_dim)) * (s_dim - _T(s_dim))
    k = s.shape[-1]
    diag_ones = expand_dims(_eye(aval_of(s).dtype, k), range(s_diffs.ndim - 2))
    # 1/(s_j^2 - s_i^2) off the diagonal, 0 on it (the identity keeps the division finite).
    f_mat = 1 / (s_diffs + diag_ones) - diag_ones
    dss = s_dim.astype(dtype) * ds_mat
    sds = _T(s_dim.astype(dtype)) * ds_mat
    s_zeros = (s == 0).astype(aval_of(s).dtype)
    s_inv = 1 / (s + s_zeros) - s_zeros
    s_inv_mat = construct_diagonal(s_inv)
    du_dv_diag = 0.5 * (ds_mat - _H(ds_mat)) * s_inv_mat.astype(dtype)
    du = _mm(u, f_mat.astype(dtype) * (dss + _H(dss)) + du_dv_diag)
    dv = _mm(v, f_mat.astype(dtype) * (sds + _H(sds)))
    if m > n:
        dav = _mm(da, v)
        du = du + (dav - _mm(u, _mm(ut, dav))) / s_dim.astype(dtype)
    if n > m:
        dahu = _mm(_H(da), u)
        dv = dv + (dahu - _mm(v, _mm(vt, dahu))) / s_dim.astype(dtype)
    return [s, u, vt], [ds, du, _H(dv)]


jvp_rules.set(svd_p, _svd_jvp)
_leading_batcher(svd_p)


__all__ = ["svd", "svd_p"]
