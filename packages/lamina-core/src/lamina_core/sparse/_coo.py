"""`COO`, the coordinate-format sparse matrix, and its primitives on raw buffers:
`coo_todense`, `coo_fromdense`, `coo_matvec` and `coo_matmat`, each with its abstract
evaluation, eager impl (written with jnp), jvp and transpose rules (no batching rule, as JAX).

A COO matrix is three buffers of length `nse`: `data`, `row` and `col`; `COOInfo` (the shape
and whether rows or columns are sorted) travels in the params. On CPU JAX lowers each
primitive as its impl; the umbrella's `coo` module registers that lowering.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, NamedTuple, Self

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.interpreters import Zero, defjvp, is_undefined, jvp_rules, transpose_rules, zero_of
from lamina_core.ir import ShapedArray
from lamina_core.sparse._base import JAXSparse
from lamina_core.sparse._util import _coo_extract
from lamina_core.trace import UserPrimitive, concrete_or_error
from lamina_core.tree.tree_util import register_pytree_node_class

Array = Any
Shape = tuple[int, ...]


class COOInfo(NamedTuple):
    """The static part of a COO matrix, carried in the primitives' params."""

    shape: Shape
    rows_sorted: bool = False
    cols_sorted: bool = False


@register_pytree_node_class
class COO(JAXSparse):
    """Experimental COO matrix (`jax.experimental.sparse.COO`): `data`, `row` and `col` of
    length `nse`. Prefer `BCOO`, as JAX advises: COO has little transformation support."""

    data: Array
    row: Array
    col: Array
    _rows_sorted: bool
    _cols_sorted: bool

    def __init__(
        self,
        args: tuple[Array, Array, Array],
        *,
        shape: Sequence[int],
        rows_sorted: bool = False,
        cols_sorted: bool = False,
    ) -> None:
        self.data, self.row, self.col = map(jnp.asarray, args)
        self._rows_sorted = rows_sorted
        self._cols_sorted = cols_sorted
        super().__init__(args, shape=shape)

    @property
    def _info(self) -> COOInfo:
        return COOInfo(self.shape, self._rows_sorted, self._cols_sorted)

    @property
    def _bufs(self) -> tuple[Array, Array, Array]:
        return self.data, self.row, self.col

    @property
    def nse(self) -> int:
        return int(self.data.size)

    @property
    def dtype(self) -> np.dtype[Any]:
        dtype: np.dtype[Any] = np.dtype(self.data.dtype)
        return dtype

    @classmethod
    def fromdense(cls, mat: Array, *, nse: int | None = None, index_dtype: Any = np.int32) -> COO:
        return coo_fromdense(mat, nse=nse, index_dtype=index_dtype)

    def _sort_indices(self) -> COO:
        """This matrix with its entries sorted by row, then column (itself if rows are sorted)."""
        if self._rows_sorted:
            return self
        row, col, data = lax.sort((self.row, self.col, self.data), num_keys=2)
        return type(self)((data, row, col), shape=self.shape, rows_sorted=True)

    @classmethod
    def _empty(cls, shape: Sequence[int], *, dtype: Any = None, index_dtype: Any = "int32") -> COO:
        shape = tuple(shape)
        if len(shape) != 2:
            raise ValueError(f"COO must have ndim=2; got {shape=}")
        data = jnp.empty(0, dtype)
        row = col = jnp.empty(0, index_dtype)
        return cls((data, row, col), shape=shape, rows_sorted=True, cols_sorted=True)

    @classmethod
    def _eye(cls, N: int, M: int, k: int, *, dtype: Any = None, index_dtype: Any = "int32") -> COO:
        diag_size = min(N, M - k) if k > 0 else min(N + k, M)
        if diag_size <= 0:
            return cls._empty((N, M), dtype=dtype, index_dtype=index_dtype)
        data = jnp.ones(diag_size, dtype=dtype)
        idx = jnp.arange(diag_size, dtype=index_dtype)
        zero = np.array(0, idx.dtype)
        kk = np.array(k, idx.dtype)
        row = lax.sub(idx, lax.cond(kk >= 0, lambda: zero, lambda: kk))
        col = lax.add(idx, lax.cond(kk <= 0, lambda: zero, lambda: kk))
        return cls((data, row, col), shape=(N, M), rows_sorted=True, cols_sorted=True)

    def todense(self) -> Array:
        return coo_todense(self)

    def transpose(self, axes: Sequence[int] | None = None) -> COO:
        if axes is not None:
            raise NotImplementedError("axes argument to transpose()")
        return COO(
            (self.data, self.col, self.row),
            shape=self.shape[::-1],
            rows_sorted=self._cols_sorted,
            cols_sorted=self._rows_sorted,
        )

    def tree_flatten(self) -> tuple[tuple[Array, Array, Array], dict[str, Any]]:
        return (self.data, self.row, self.col), self._info._asdict()

    @classmethod
    def tree_unflatten(cls, aux_data: Any, children: Sequence[Any]) -> Self:
        obj = object.__new__(cls)
        obj.data, obj.row, obj.col = children
        if aux_data.keys() != {"shape", "rows_sorted", "cols_sorted"}:
            raise ValueError(f"COO.tree_unflatten: invalid {aux_data=}")
        obj.shape = aux_data["shape"]
        obj._rows_sorted = aux_data["rows_sorted"]
        obj._cols_sorted = aux_data["cols_sorted"]
        return obj

    def __matmul__(self, other: Any) -> Array:
        if isinstance(other, JAXSparse):
            raise NotImplementedError("matmul between two sparse objects.")
        other = jnp.asarray(other)
        data, other = jnp.promote_dtypes(self.data, other)
        promoted = COO((data, self.row, self.col), **self._info._asdict())
        if other.ndim == 1:
            return coo_matvec(promoted, other)
        if other.ndim == 2:
            return coo_matmat(promoted, other)
        raise NotImplementedError(f"matmul with object of shape {other.shape}")


# --- coo_todense --------------------------------------------------------------------------

coo_todense_p = UserPrimitive("coo_todense")


def coo_todense(mat: COO) -> Array:
    """The dense matrix a COO matrix stands for (duplicate entries summed)."""
    return _coo_todense(mat.data, mat.row, mat.col, spinfo=mat._info)


def _coo_todense(data: Array, row: Array, col: Array, *, spinfo: COOInfo) -> Array:
    return coo_todense_p.bind(data, row, col, spinfo=spinfo)


@coo_todense_p.def_impl
def coo_todense_impl(data: Array, row: Array, col: Array, *, spinfo: COOInfo) -> Array:
    return jnp.zeros(spinfo.shape, data.dtype).at[row, col].add(data)


@coo_todense_p.def_abstract_eval
def _coo_todense_abstract_eval(data: Any, row: Any, col: Any, *, spinfo: COOInfo) -> ShapedArray:
    return ShapedArray(tuple(spinfo.shape), data.dtype)


def _coo_todense_jvp(
    data_dot: Array, data: Array, row: Array, col: Array, *, spinfo: COOInfo
) -> Any:
    return _coo_todense(data_dot, row, col, spinfo=spinfo)


def _coo_todense_transpose(ct: Array, data: Any, row: Any, col: Any, *, spinfo: COOInfo) -> Any:
    # The cotangent is assumed to have the sparsity pattern of the primal, as in JAX.
    assert is_undefined(data)
    if is_undefined(row) or is_undefined(col):
        raise ValueError("Cannot transpose with respect to sparse indices")
    assert ct.shape == spinfo.shape
    assert row.aval.dtype == col.aval.dtype
    assert ct.dtype == data.aval.dtype
    return _coo_extract(row, col, ct), row, col


defjvp(coo_todense_p, _coo_todense_jvp, None, None)
transpose_rules.set(coo_todense_p, _coo_todense_transpose)


# --- coo_fromdense ------------------------------------------------------------------------

coo_fromdense_p = UserPrimitive("coo_fromdense")
coo_fromdense_p.multiple_results = True


def coo_fromdense(mat: Array, *, nse: int | None = None, index_dtype: Any = jnp.int32) -> COO:
    """The COO form of a dense matrix, with `nse` stored entries (by default, its nonzeros)."""
    if nse is None:
        nse = int((mat != 0).sum())
    nse_int = operator.index(concrete_or_error(nse, "coo_fromdense nse argument"))
    return COO(
        _coo_fromdense(mat, nse=nse_int, index_dtype=index_dtype),
        shape=mat.shape,
        rows_sorted=True,
    )


def _coo_fromdense(mat: Array, *, nse: int, index_dtype: Any = jnp.int32) -> tuple[Array, ...]:
    mat = jnp.asarray(mat)
    nse = operator.index(concrete_or_error(nse, "nse argument of coo_fromdense()"))
    return tuple(coo_fromdense_p.bind(mat, nse=nse, index_dtype=index_dtype))


@coo_fromdense_p.def_impl
def coo_fromdense_impl(mat: Array, *, nse: int, index_dtype: Any) -> tuple[Array, Array, Array]:
    mat = jnp.asarray(mat)
    assert mat.ndim == 2
    row, col = jnp.nonzero(mat, size=nse)
    data = mat[row, col]
    true_nonzeros = jnp.arange(nse) < (mat != 0).sum()
    data = jnp.where(true_nonzeros, data, 0)
    return data, row.astype(index_dtype), col.astype(index_dtype)


@coo_fromdense_p.def_abstract_eval
def _coo_fromdense_abstract_eval(mat: Any, *, nse: int, index_dtype: Any) -> list[ShapedArray]:
    data = ShapedArray((nse,), mat.dtype)
    row = col = ShapedArray((nse,), np.dtype(index_dtype))
    return [data, row, col]


def _coo_fromdense_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, nse: int, index_dtype: Any
) -> tuple[Any, Any]:
    (mat,), (mat_dot,) = primals, tangents
    primals_out = _coo_fromdense(mat, nse=nse, index_dtype=index_dtype)
    data, row, col = primals_out
    data_dot = zero_of(data) if type(mat_dot) is Zero else _coo_extract(row, col, mat_dot)
    return list(primals_out), [data_dot, zero_of(row), zero_of(col)]


def _coo_fromdense_transpose(ct: Sequence[Any], mat: Any, *, nse: int, index_dtype: Any) -> Any:
    data, row, col = ct
    assert len(data) == nse
    assert row.dtype == col.dtype == index_dtype
    if isinstance(row, Zero) or isinstance(col, Zero):
        raise ValueError("Cannot transpose with respect to sparse indices")
    assert is_undefined(mat)
    return [_coo_todense(data, row, col, spinfo=COOInfo(shape=mat.aval.shape))]


jvp_rules.set(coo_fromdense_p, _coo_fromdense_jvp)
transpose_rules.set(coo_fromdense_p, _coo_fromdense_transpose)


# --- coo_matvec ---------------------------------------------------------------------------

coo_matvec_p = UserPrimitive("coo_matvec")


def coo_matvec(mat: COO, v: Array, transpose: bool = False) -> Array:
    """The product of a COO matrix (transposed if `transpose`) and a dense vector."""
    data, row, col = mat._bufs
    return _coo_matvec(data, row, col, v, spinfo=mat._info, transpose=transpose)


def _coo_matvec(
    data: Array, row: Array, col: Array, v: Array, *, spinfo: COOInfo, transpose: bool = False
) -> Array:
    return coo_matvec_p.bind(data, row, col, v, spinfo=spinfo, transpose=transpose)


@coo_matvec_p.def_impl
def coo_matvec_impl(
    data: Array, row: Array, col: Array, v: Array, *, spinfo: COOInfo, transpose: bool
) -> Array:
    v = jnp.asarray(v)
    if transpose:
        row, col = col, row
    out_shape = spinfo.shape[1] if transpose else spinfo.shape[0]
    dv = data * jnp.getitem(v, col)
    return jnp.zeros(out_shape, dv.dtype).at[row].add(dv)


@coo_matvec_p.def_abstract_eval
def _coo_matvec_abstract_eval(
    data: Any, row: Any, col: Any, v: Any, *, spinfo: COOInfo, transpose: bool
) -> ShapedArray:
    assert data.shape == row.shape == col.shape
    assert data.dtype == v.dtype
    assert row.dtype == col.dtype
    assert len(spinfo.shape) == 2
    assert v.ndim == 1
    assert v.shape[0] == (spinfo.shape[0] if transpose else spinfo.shape[1])
    out_shape = spinfo.shape[1] if transpose else spinfo.shape[0]
    return ShapedArray((out_shape,), data.dtype)


def _coo_matvec_jvp_mat(
    data_dot: Array, data: Array, row: Array, col: Array, v: Array, *, spinfo: COOInfo,
    transpose: bool,
) -> Any:  # fmt: skip
    return _coo_matvec(data_dot, row, col, v, spinfo=spinfo, transpose=transpose)


def _coo_matvec_jvp_vec(
    v_dot: Array, data: Array, row: Array, col: Array, v: Array, *, spinfo: COOInfo,
    transpose: bool,
) -> Any:  # fmt: skip
    return _coo_matvec(data, row, col, v_dot, spinfo=spinfo, transpose=transpose)


def _coo_matvec_transpose(
    ct: Array, data: Any, row: Any, col: Any, v: Any, *, spinfo: COOInfo, transpose: bool
) -> Any:
    assert not is_undefined(row)
    assert not is_undefined(col)
    if is_undefined(v):
        out = _coo_matvec(data, row, col, ct, spinfo=spinfo, transpose=not transpose)
        return data, row, col, out
    v = jnp.asarray(v)
    # `_coo_extract(row, col, jnp.outer(ct, v))` without the dense outer product
    return jnp.getitem(ct, row) * jnp.getitem(v, col), row, col, v


defjvp(coo_matvec_p, _coo_matvec_jvp_mat, None, None, _coo_matvec_jvp_vec)
transpose_rules.set(coo_matvec_p, _coo_matvec_transpose)


# --- coo_matmat ---------------------------------------------------------------------------

coo_matmat_p = UserPrimitive("coo_matmat")


def coo_matmat(mat: COO, B: Array, *, transpose: bool = False) -> Array:
    """The product of a COO matrix (transposed if `transpose`) and a dense matrix."""
    data, row, col = mat._bufs
    return _coo_matmat(data, row, col, B, spinfo=mat._info, transpose=transpose)


def _coo_matmat(
    data: Array, row: Array, col: Array, B: Array, *, spinfo: COOInfo, transpose: bool = False
) -> Array:
    return coo_matmat_p.bind(data, row, col, B, spinfo=spinfo, transpose=transpose)


@coo_matmat_p.def_impl
def coo_matmat_impl(
    data: Array, row: Array, col: Array, B: Array, *, spinfo: COOInfo, transpose: bool
) -> Array:
    B = jnp.asarray(B)
    if transpose:
        row, col = col, row
    out_shape = spinfo.shape[1] if transpose else spinfo.shape[0]
    dB = data[:, None] * jnp.getitem(B, col)
    return jnp.zeros((out_shape, B.shape[1]), dB.dtype).at[row].add(dB)


@coo_matmat_p.def_abstract_eval
def _coo_matmat_abstract_eval(
    data: Any, row: Any, col: Any, B: Any, *, spinfo: COOInfo, transpose: bool
) -> ShapedArray:
    assert data.shape == row.shape == col.shape
    assert data.dtype == B.dtype
    assert B.ndim == 2
    assert len(spinfo.shape) == 2
    assert B.shape[0] == (spinfo.shape[0] if transpose else spinfo.shape[1])
    out_shape = spinfo.shape[1] if transpose else spinfo.shape[0]
    return ShapedArray((out_shape, B.shape[1]), data.dtype)


def _coo_matmat_jvp_left(
    data_dot: Array, data: Array, row: Array, col: Array, B: Array, *, spinfo: COOInfo,
    transpose: bool,
) -> Any:  # fmt: skip
    return _coo_matmat(data_dot, row, col, B, spinfo=spinfo, transpose=transpose)


def _coo_matmat_jvp_right(
    B_dot: Array, data: Array, row: Array, col: Array, B: Array, *, spinfo: COOInfo,
    transpose: bool,
) -> Any:  # fmt: skip
    return _coo_matmat(data, row, col, B_dot, spinfo=spinfo, transpose=transpose)


def _coo_matmat_transpose(
    ct: Array, data: Any, row: Any, col: Any, B: Any, *, spinfo: COOInfo, transpose: bool
) -> Any:
    assert not is_undefined(row)
    assert not is_undefined(col)
    if is_undefined(B):
        out = _coo_matmat(data, row, col, ct, spinfo=spinfo, transpose=not transpose)
        return data, row, col, out
    B = jnp.asarray(B)
    return (jnp.getitem(ct, row) * jnp.getitem(B, col)).sum(1), row, col, B


defjvp(coo_matmat_p, _coo_matmat_jvp_left, None, None, _coo_matmat_jvp_right)
transpose_rules.set(coo_matmat_p, _coo_matmat_transpose)
