"""`tridiagonal_solve_p`, the solution of tridiagonal systems `A X = B` given `A`'s three
diagonals (`dl[i] = A[i, i-1]`, `d[i] = A[i, i]`, `du[i] = A[i, i+1]`, each `..., m`) and
`B` (`..., m, k`): JAX's checks and messages, a NumPy reference (Gaussian elimination with
partial pivoting on the dense matrix, as LAPACK's `gtsv`; NaN where `A` is singular), JAX's
jvp (linear in `b`; the diagonals' tangents enter through `-dA X`), transpose in `b` (the
solve with the transposed diagonals) and batching rules (`b` alone mapped folds the mapped
axis into its columns).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from lamina_core.interpreters import (
    AxisData,
    BatchDim,
    Zero,
    add_tangents,
    batching_rules,
    instantiate_zeros,
    is_undefined,
    jvp_rules,
    transpose_rules,
)
from lamina_core.ir import AbstractValue, Primitive, ShapedArray, abstract_eval_rules, impl_rules
from lamina_core.lax import _checks as c
from lamina_core.lax._ad_common import aval_of
from lamina_core.lax._array_helpers import indexed_update, static_index
from lamina_core.lax._batching_common import bdim_at_front, moveaxis, shape_of
from lamina_core.lax._gather_scatter import ScatterDimensionNumbers, scatter_add
from lamina_core.lax._joining import concatenate
from lamina_core.lax._shape import reshape
from lamina_core.lax._structural import full_like
from lamina_core.lax._types import Array
from lamina_core.lax.linalg._primitives import _INEXACT_NAMES, _check_dtypes, _split_batch

tridiagonal_solve_p: Final = Primitive("tridiagonal_solve")


@abstract_eval_rules.register(tridiagonal_solve_p)
def _tridiagonal_solve_abstract_eval(
    dl: AbstractValue,
    d: AbstractValue,
    du: AbstractValue,
    b: AbstractValue,
    *,
    perturb_singular: bool,
) -> ShapedArray:
    avals = [c.array_aval("tridiagonal_solve", x) for x in (dl, d, du, b)]
    _check_dtypes("tridiagonal_solve", avals, [_INEXACT_NAMES] * 4)
    if len({a.dtype for a in avals}) != 1:
        names = ", ".join(a.dtype.name for a in avals)
        raise TypeError(
            f"lax.tridiagonal_solve requires arguments to have the same dtypes, got {names}."
        )
    batch, cores = _split_batch("tridiagonal_solve", avals, [1, 1, 1, 2])
    shapes = [a.shape for a in avals]
    if shapes[0] != shapes[1] or shapes[0] != shapes[2]:
        raise TypeError(
            "tridiagonal_solve requires that all diagonal arguments have the same shape."
        )
    if cores[0] != cores[3][:-1] or shapes[0][:-1] != shapes[3][:-2]:
        raise TypeError(
            "tridiagonal_solve requires that the leading ndim-1 dimensions of b equal the "
            "dimensions of the diagonal arguments."
        )
    weak = all(a.weak_type for a in avals)
    return ShapedArray(batch + cores[3], avals[3].dtype, weak_type=weak)


def _solve_one(dl: np.ndarray, d: np.ndarray, du: np.ndarray, b: np.ndarray) -> np.ndarray:
    m = d.shape[-1]
    a = np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1) if m else np.zeros((0, 0), d.dtype)
    try:
        x = np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        return np.full_like(b, np.nan)
    return x if np.all(np.isfinite(x)) else np.full_like(b, np.nan)


@impl_rules.register(tridiagonal_solve_p)
def _tridiagonal_solve_impl(
    dl: np.ndarray, d: np.ndarray, du: np.ndarray, b: np.ndarray, *, perturb_singular: bool
) -> np.ndarray:
    if perturb_singular:
        raise NotImplementedError(
            "Lamina's reference tridiagonal_solve does not perturb singular matrices."
        )
    b = np.asarray(b)
    keep = b.dtype.kind == "c" or b.dtype == np.float64
    work = np.dtype(b.dtype) if keep else np.dtype(np.float32)
    args = [np.asarray(x).astype(work) for x in (dl, d, du, b)]
    out = np.empty(args[3].shape, work)
    for idx in np.ndindex(*b.shape[:-2]):
        out[idx] = _solve_one(*(x[idx] for x in args))
    return out.astype(b.dtype)


def tridiagonal_solve(
    dl: Array, d: Array, du: Array, b: Array, *, perturb_singular: bool = False
) -> Array:
    """`X` with `A X = B` for the tridiagonal `A` of diagonals `dl` (`dl[0]` unused), `d` and
    `du` (`du[-1]` unused); `perturb_singular` perturbs tiny pivots of singular systems."""
    return tridiagonal_solve_p.bind(dl, d, du, b, perturb_singular=perturb_singular)


def _tridiagonal_product(dl: Any, d: Any, du: Any, b: Any) -> Any:
    """`A b` for the tridiagonal `A` of the three diagonals."""
    y = reshape(d, (*shape_of(d), 1)) * b
    y = _add_rows(y, 1, dl[..., 1:, None] * b[..., :-1, :])
    return _add_rows(y, 0, du[..., :-1, None] * b[..., 1:, :])


def _add_rows(y: Any, start: int, rows: Any) -> Any:
    """`y.at[..., start:start + m - 1, :].add(rows)`, `y` being `(..., m, n)`: a scatter-add
    of the rows from the static start."""
    shape = shape_of(y)
    axis = len(shape) - 2
    index = static_index(start, shape)
    dnums = ScatterDimensionNumbers(
        update_window_dims=tuple(range(len(shape))),
        inserted_window_dims=(),
        scatter_dims_to_operand_dims=(axis,),
    )
    selection = (*shape[:axis], shape[axis] - 1, shape[-1])
    return indexed_update(y, index, rows, dnums, selection, scatter_add, static=True)


def _tridiagonal_solve_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, perturb_singular: bool
) -> tuple[Any, Any]:
    *diags, _ = primals
    *diags_dot, b_dot = tangents
    ans = tridiagonal_solve_p.bind(*primals, perturb_singular=perturb_singular)
    if all(type(t) is Zero for t in diags_dot):
        rhs = b_dot
    else:
        dl_dot, d_dot, du_dot = (instantiate_zeros(t) for t in diags_dot)
        matvec_dot = _tridiagonal_product(dl_dot, d_dot, du_dot, ans)
        rhs = add_tangents(b_dot, -matvec_dot)
    ans_dot = tridiagonal_solve_p.bind(*diags, rhs, perturb_singular=perturb_singular)
    return ans, ans_dot


def _tridiagonal_solve_transpose(
    ct: Any, dl: Any, d: Any, du: Any, b: Any, *, perturb_singular: bool
) -> list[Any]:
    if any(is_undefined(x) for x in (dl, d, du)) or not is_undefined(b):
        raise ValueError("tridiagonal_solve is linear in its right-hand side b only.")
    if type(ct) is Zero:
        return [None, None, None, Zero(b.aval)]
    axis = aval_of(du).ndim - 1
    dl_t = concatenate([full_like(du[..., -1:], 0), du[..., :-1]], axis)
    du_t = concatenate([dl[..., 1:], full_like(dl[..., :1], 0)], axis)
    ct_b = tridiagonal_solve(dl_t, d, du_t, ct, perturb_singular=perturb_singular)
    return [None, None, None, ct_b]


def _tridiagonal_solve_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], *, perturb_singular: bool
) -> tuple[Any, Any]:
    dl, d, du, b = vals
    bdl, bd, bdu, bb = dims
    if bdl is None and bd is None and bdu is None and bb is not None:
        b = moveaxis(b, bb, -2)
        shape = shape_of(b)
        flat = reshape(b, (*shape[:-3], shape[-3], shape[-2] * shape[-1]))
        out = tridiagonal_solve(dl, d, du, flat, perturb_singular=perturb_singular)
        return reshape(out, shape), len(shape) - 2
    size = axis_data.size
    args = [bdim_at_front(x, bdim, size) for x, bdim in zip(vals, dims, strict=True)]
    return tridiagonal_solve(*args, perturb_singular=perturb_singular), 0


jvp_rules.set(tridiagonal_solve_p, _tridiagonal_solve_jvp)
transpose_rules.set(tridiagonal_solve_p, _tridiagonal_solve_transpose)
batching_rules.set(tridiagonal_solve_p, _tridiagonal_solve_batch)


__all__ = ["tridiagonal_solve", "tridiagonal_solve_p"]
