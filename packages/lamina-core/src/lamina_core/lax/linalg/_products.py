"""The product primitives of `jax.lax.linalg`: `symmetric_product_p` (`alpha A A^T + beta C`),
`cholesky_update_p` (the rank-1 update of an upper Cholesky factor by Givens rotations) and
`ormqr_p` (a matrix multiplied by the `Q` of packed Householder reflectors, LAPACK's
`ormqr`/`unmqr`), with JAX's checks and messages, NumPy references and batching rules
(`cholesky_update` has none, as in JAX). None is differentiable, as in JAX.

`jax_symmetric_product` and `jax_cholesky_update` are the Lamina programs CPU lowerings trace,
as JAX lowers these two primitives on CPU from its own functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from lamina_core.interpreters import not_differentiable
from lamina_core.ir import AbstractValue, Primitive, ShapedArray, abstract_eval_rules, impl_rules
from lamina_core.lax import _checks as c
from lamina_core.lax._array_helpers import indexed_update, static_index
from lamina_core.lax._dot_types import Precision
from lamina_core.lax._elementwise import abs as abs_
from lamina_core.lax._gather_scatter import ScatterDimensionNumbers, scatter
from lamina_core.lax._linalg import batch_matmul
from lamina_core.lax._selection import select
from lamina_core.lax._shape import shape_of, transpose
from lamina_core.lax._transcendental import sqrt
from lamina_core.lax._types import Array
from lamina_core.lax.control_flow.conditionals import cond
from lamina_core.lax.linalg._batching import _leading_batcher
from lamina_core.lax.linalg._primitives import (
    _INEXACT_NAMES,
    _T,
    _check_dtypes,
    _split_batch,
    _tril,
)

symmetric_product_p: Final = Primitive("symmetric_product")
cholesky_update_p: Final = Primitive("cholesky_update")
ormqr_p: Final = Primitive("ormqr")


def _check_floating(name: str, avals: Sequence[ShapedArray]) -> None:
    for i, aval in enumerate(avals):
        if c.kind_of(aval.dtype) != "f":
            raise TypeError(
                f"{name} does not accept dtype {aval.dtype.name} at position {i}. "
                f"Accepted dtypes at position {i} are subtypes of floating."
            )


def _check_same(name: str, avals: Sequence[ShapedArray]) -> None:
    if len({a.dtype for a in avals}) != 1:
        names = ", ".join(a.dtype.name for a in avals)
        raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got {names}.")


def _work(x: np.ndarray) -> np.ndarray:
    keep = x.dtype.kind == "c" or x.dtype == np.float64
    return x if keep else x.astype(np.float32)


# --- symmetric_product ------------------------------------------------------------------------


@abstract_eval_rules.register(symmetric_product_p)
def _symmetric_product_abstract_eval(
    a: AbstractValue, c_: AbstractValue, *, alpha: float, beta: float
) -> ShapedArray:
    avals = [c.array_aval("symmetric_product", x) for x in (a, c_)]
    _check_floating("symmetric_product", avals)
    _check_same("symmetric_product", avals)
    batch, (a_core, c_core) = _split_batch("symmetric_product", avals, [2, 2])
    if a_core[0] != c_core[1] or c_core[0] != c_core[1]:
        raise ValueError(
            "symmetric_update expects a rectangular matrix of shape (m, n) and a square matrix "
            f"of shape (n, n). Got shapes {a_core} and {c_core}."
        )
    return ShapedArray(batch + c_core, avals[1].dtype, weak_type=all(v.weak_type for v in avals))


@impl_rules.register(symmetric_product_p)
def _symmetric_product_impl(
    a: np.ndarray, c_: np.ndarray, *, alpha: float, beta: float
) -> np.ndarray:
    out_dtype = np.asarray(c_).dtype
    a, c_ = _work(np.asarray(a)), _work(np.asarray(c_))
    out = alpha * (a @ np.swapaxes(a, -1, -2)) + beta * c_
    return np.asarray(out).astype(out_dtype)


def jax_symmetric_product(a: Any, c_: Any, *, alpha: float, beta: float) -> Any:
    """`alpha a a^T + beta c` in lax operations (the CPU lowering)."""
    return alpha * batch_matmul(a, _T(a), precision=Precision.HIGHEST) + beta * c_


def symmetric_product(
    a_matrix: Array,
    c_matrix: Array,
    *,
    alpha: float = 1.0,
    beta: float = 0.0,
    symmetrize_output: bool = False,
) -> Array:
    """`alpha A A^T + beta C` for `A` (`..., m, n`) and symmetric `C` (`..., m, m`); only the
    lower triangle is guaranteed unless `symmetrize_output` mirrors it into the upper one."""
    result = symmetric_product_p.bind(a_matrix, c_matrix, alpha=alpha, beta=beta)
    if symmetrize_output:
        ndim = result.ndim
        upper = transpose(_tril(result, k=-1), (*range(ndim - 2), ndim - 1, ndim - 2))
        result = _tril(result, k=0) + upper
    return result


# --- cholesky_update --------------------------------------------------------------------------


@abstract_eval_rules.register(cholesky_update_p)
def _cholesky_update_abstract_eval(r: AbstractValue, w: AbstractValue) -> ShapedArray:
    avals = [c.array_aval("cholesky_update", x) for x in (r, w)]
    _check_floating("cholesky_update", avals)
    _check_same("cholesky_update", avals)
    for i, (aval, rank) in enumerate(zip(avals, (2, 1), strict=True)):
        if aval.ndim < rank:
            raise TypeError(
                f"Input {i} to cholesky_update must have rank at least {rank}, but got "
                f"shape={aval.shape}"
            )
        if aval.ndim != rank:
            raise TypeError(
                f"Input {i} to cholesky_update must have a rank of exactly {rank}, but got "
                f"shape={aval.shape}"
            )
    r_shape, w_shape = avals[0].shape, avals[1].shape
    if r_shape[0] != r_shape[1] or w_shape[0] != r_shape[1]:
        raise ValueError(
            "Rank-1 update to Cholesky decomposition takes a square matrix and a vector of the "
            f"same size as input. Got shapes {r_shape} and {w_shape} instead"
        )
    return ShapedArray(r_shape, avals[0].dtype, weak_type=all(v.weak_type for v in avals))


def _givens(x: Any, y: Any) -> tuple[Any, Any]:
    if y == 0:
        return x * 0 + 1, x * 0
    scale = max(abs(x), abs(y))
    x, y = x / scale, y / scale
    rh = 1 / np.sqrt(x**2 + y**2)
    return x * rh, -y * rh


@impl_rules.register(cholesky_update_p)
def _cholesky_update_impl(r: np.ndarray, w: np.ndarray) -> np.ndarray:
    dtype = np.asarray(r).dtype
    r, z = _work(np.asarray(r)).copy(), _work(np.asarray(w)).copy()
    for k in range(z.shape[0]):
        cos, sin = _givens(r[k, k], z[k])
        row = r[k, :].copy()
        r[k, :], z = cos * row - sin * z, cos * z + sin * row
    return r.astype(dtype)


def jax_cholesky_update(r: Any, z: Any) -> Any:
    """The rank-1 update by Givens rotations in lax operations (the CPU lowering)."""

    def nonzero(x: Any, y: Any) -> tuple[Any, Any]:
        abs_x, abs_y = abs_(x), abs_(y)
        denominator = select(abs_x > abs_y, abs_x, abs_y)
        x, y = x / denominator, y / denominator
        rh = 1 / sqrt(x**2 + y**2)
        return x * rh, -y * rh

    def zero(x: Any, y: Any) -> tuple[Any, Any]:
        dtype = x.dtype
        return np.array(1.0, dtype=dtype), np.array(0.0, dtype=dtype)

    for k in range(z.shape[0]):
        x, y = r[k, k], z[k]
        cos, sin = cond(y == 0, zero, nonzero, x, y)
        row = r[k, :]
        row, z = cos * row - sin * z, cos * z + sin * row
        r = _set_row(r, k, row)
    return r


def _set_row(r: Any, k: int, row: Any) -> Any:
    """`r.at[k, :].set(row)`: a scatter of the row at static index `k`."""
    dnums = ScatterDimensionNumbers(
        update_window_dims=(0,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
    )
    n = shape_of(r)[1]
    return indexed_update(r, static_index(k, shape_of(r)), row, dnums, (n,), scatter, static=True)


def cholesky_update(r_matrix: Array, w_vector: Array) -> Array:
    """The upper Cholesky factor of `R^T R + w w^T` from the factor `R` of `R^T R`."""
    return cholesky_update_p.bind(r_matrix, w_vector)


# --- ormqr ------------------------------------------------------------------------------------


@abstract_eval_rules.register(ormqr_p)
def _ormqr_abstract_eval(
    a: AbstractValue, taus: AbstractValue, c_: AbstractValue, *, left: bool, transpose: bool
) -> ShapedArray:
    avals = [c.array_aval("ormqr", x) for x in (a, taus, c_)]
    _check_dtypes("ormqr", avals, [_INEXACT_NAMES] * 3)
    _check_same("ormqr", avals)
    batch, (a_core, _, c_core) = _split_batch("ormqr", avals, [2, 1, 2])
    m = a_core[0]
    if left and c_core[0] != m:
        raise ValueError(
            "ormqr with left=True expects c to have the same number of rows as the "
            f"Householder matrix a. Got a shape {a_core} and c shape {c_core}."
        )
    if not left and c_core[1] != m:
        raise ValueError(
            "ormqr with left=False expects c to have the same number of columns as the "
            f"Householder matrix a has rows. Got a shape {a_core} and c shape {c_core}."
        )
    return ShapedArray(batch + c_core, avals[2].dtype, weak_type=all(v.weak_type for v in avals))


def _q_of(a: np.ndarray, taus: np.ndarray) -> np.ndarray:
    m = a.shape[0]
    q = np.eye(m, dtype=a.dtype)
    for i in range(taus.shape[0]):
        v = np.zeros(m, a.dtype)
        v[i] = 1
        v[i + 1 :] = a[i + 1 :, i]
        q = q @ (np.eye(m, dtype=a.dtype) - taus[i] * np.outer(v, np.conj(v)))
    return q


@impl_rules.register(ormqr_p)
def _ormqr_impl(
    a: np.ndarray, taus: np.ndarray, c_: np.ndarray, *, left: bool, transpose: bool
) -> np.ndarray:
    dtype = np.asarray(c_).dtype
    a, taus, c_ = (_work(np.asarray(x)) for x in (a, taus, c_))
    out = np.empty(c_.shape, c_.dtype)
    for idx in np.ndindex(*c_.shape[:-2]):
        q = _q_of(a[idx], taus[idx])
        if transpose:
            q = np.conj(q).T
        out[idx] = q @ c_[idx] if left else c_[idx] @ q
    return out.astype(dtype)


def ormqr(a: Array, taus: Array, c_: Array, *, left: bool = True, transpose: bool = False) -> Array:
    """`Q C` (`left`) or `C Q`, with `Q^H` for `transpose`, where `Q` is the product of the
    Householder reflectors packed below the diagonal of `a` with scales `taus` (`geqrf`)."""
    return ormqr_p.bind(a, taus, c_, left=left, transpose=transpose)


_leading_batcher(symmetric_product_p)
_leading_batcher(ormqr_p)


# JAX 0.10.2 has no derivative for these: differentiating through them raises its error.
not_differentiable(symmetric_product_p)
not_differentiable(cholesky_update_p)
not_differentiable(ormqr_p)

__all__ = [
    "cholesky_update",
    "cholesky_update_p",
    "ormqr",
    "ormqr_p",
    "symmetric_product",
    "symmetric_product_p",
]
