"""`CSR` and `CSC`, the compressed-row and compressed-column sparse matrices, and the CSR
primitives on raw buffers: `csr_todense`, `csr_fromdense`, `csr_matvec` and `csr_matmat`, each
with its abstract evaluation, eager impl, jvp and transpose rules (no batching rule, as JAX).

A CSR matrix is `data` and `indices` (column of each stored entry, length `nse`) and `indptr`
(`shape[0] + 1` offsets into them); a CSC matrix is the CSR form of its transpose. The impls
convert to COO (`_csr_to_coo`) and bind the COO primitives; on CPU JAX lowers each primitive as
its impl, and the umbrella's `csr` module registers that lowering.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, Self

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.interpreters import Zero, defjvp, is_undefined, jvp_rules, transpose_rules, zero_of
from lamina_core.ir import ShapedArray
from lamina_core.sparse._base import JAXSparse
from lamina_core.sparse._coo import COOInfo, _coo_matmat, _coo_matvec, _coo_todense
from lamina_core.sparse._util import _csr_extract, _csr_to_coo
from lamina_core.trace import UserPrimitive, concrete_or_error
from lamina_core.tree.tree_util import register_pytree_node_class

Array = Any
Shape = tuple[int, ...]


def _unflatten_compressed(cls: type[Any], aux_data: Any, children: Sequence[Any]) -> Any:
    obj = object.__new__(cls)
    obj.data, obj.indices, obj.indptr = children
    if aux_data.keys() != {"shape"}:
        raise ValueError(f"{cls.__name__}.tree_unflatten: invalid {aux_data=}")
    obj.__dict__.update(**aux_data)
    return obj


@register_pytree_node_class
class CSR(JAXSparse):
    """Experimental CSR matrix (`jax.experimental.sparse.CSR`). Prefer `BCOO` or `BCSR`, as
    JAX advises: CSR has little transformation support."""

    data: Array
    indices: Array
    indptr: Array

    def __init__(self, args: tuple[Array, Array, Array], *, shape: Sequence[int]) -> None:
        self.data, self.indices, self.indptr = map(jnp.asarray, args)
        super().__init__(args, shape=shape)

    @property
    def _bufs(self) -> tuple[Array, Array, Array]:
        return self.data, self.indices, self.indptr

    @property
    def nse(self) -> int:
        return int(self.data.size)

    @property
    def dtype(self) -> np.dtype[Any]:
        dtype: np.dtype[Any] = np.dtype(self.data.dtype)
        return dtype

    @classmethod
    def fromdense(cls, mat: Array, *, nse: Any = None, index_dtype: Any = np.int32) -> CSR:
        if nse is None:
            nse = (mat != 0).sum()
        return csr_fromdense(mat, nse=nse, index_dtype=index_dtype)

    @classmethod
    def _empty(cls, shape: Sequence[int], *, dtype: Any = None, index_dtype: Any = "int32") -> CSR:
        shape = tuple(shape)
        if len(shape) != 2:
            raise ValueError(f"CSR must have ndim=2; got {shape=}")
        data = jnp.empty(0, dtype)
        indices = jnp.empty(0, index_dtype)
        indptr = jnp.zeros(shape[0] + 1, index_dtype)
        return cls((data, indices, indptr), shape=shape)

    @classmethod
    def _eye(cls, N: int, M: int, k: int, *, dtype: Any = None, index_dtype: Any = "int32") -> CSR:
        diag_size = min(N, M - k) if k > 0 else min(N + k, M)
        if diag_size <= 0:
            return cls._empty((N, M), dtype=dtype, index_dtype=index_dtype)
        data = jnp.ones(diag_size, dtype=dtype)
        idx = jnp.arange(diag_size, dtype=index_dtype)
        zero = np.array(0, idx.dtype)
        kk = np.array(k, idx.dtype)
        col = lax.add(idx, lax.cond(kk <= 0, lambda: zero, lambda: kk))
        indices = col.astype(index_dtype)
        row = lax.sub(idx, lax.cond(kk >= 0, lambda: zero, lambda: kk))
        counts = jnp.cumsum(jnp.bincount(row, length=N).astype(index_dtype))
        indptr = jnp.zeros(N + 1, dtype=index_dtype).at[1:].set(counts)
        return cls((data, indices, indptr), shape=(N, M))

    def todense(self) -> Array:
        return csr_todense(self)

    def transpose(self, axes: Sequence[int] | None = None) -> CSC:
        assert axes is None
        return CSC((self.data, self.indices, self.indptr), shape=self.shape[::-1])

    def __matmul__(self, other: Any) -> Array:
        if isinstance(other, JAXSparse):
            raise NotImplementedError("matmul between two sparse objects.")
        other = jnp.asarray(other)
        data, other = jnp.promote_dtypes(self.data, other)
        if other.ndim == 1:
            return _csr_matvec(data, self.indices, self.indptr, other, shape=self.shape)
        if other.ndim == 2:
            return _csr_matmat(data, self.indices, self.indptr, other, shape=self.shape)
        raise NotImplementedError(f"matmul with object of shape {other.shape}")

    def tree_flatten(self) -> tuple[tuple[Array, Array, Array], dict[str, Any]]:
        return (self.data, self.indices, self.indptr), {"shape": self.shape}

    @classmethod
    def tree_unflatten(cls, aux_data: Any, children: Sequence[Any]) -> Self:
        obj: Self = _unflatten_compressed(cls, aux_data, children)
        return obj


@register_pytree_node_class
class CSC(JAXSparse):
    """Experimental CSC matrix (`jax.experimental.sparse.CSC`): the CSR buffers of its
    transpose."""

    data: Array
    indices: Array
    indptr: Array

    def __init__(self, args: tuple[Array, Array, Array], *, shape: Sequence[int]) -> None:
        self.data, self.indices, self.indptr = map(jnp.asarray, args)
        super().__init__(args, shape=shape)

    @property
    def nse(self) -> int:
        return int(self.data.size)

    @property
    def dtype(self) -> np.dtype[Any]:
        dtype: np.dtype[Any] = np.dtype(self.data.dtype)
        return dtype

    @classmethod
    def fromdense(cls, mat: Array, *, nse: Any = None, index_dtype: Any = np.int32) -> CSC:
        if nse is None:
            nse = (mat != 0).sum()
        return csr_fromdense(mat.T, nse=nse, index_dtype=index_dtype).transpose()

    @classmethod
    def _empty(cls, shape: Sequence[int], *, dtype: Any = None, index_dtype: Any = "int32") -> CSC:
        shape = tuple(shape)
        if len(shape) != 2:
            raise ValueError(f"CSC must have ndim=2; got {shape=}")
        data = jnp.empty(0, dtype)
        indices = jnp.empty(0, index_dtype)
        indptr = jnp.zeros(shape[1] + 1, index_dtype)
        return cls((data, indices, indptr), shape=shape)

    @classmethod
    def _eye(cls, N: int, M: int, k: int, *, dtype: Any = None, index_dtype: Any = "int32") -> CSC:
        return CSR._eye(M, N, -k, dtype=dtype, index_dtype=index_dtype).transpose()

    def todense(self) -> Array:
        return csr_todense(self.transpose()).T

    def transpose(self, axes: Sequence[int] | None = None) -> CSR:
        assert axes is None
        return CSR((self.data, self.indices, self.indptr), shape=self.shape[::-1])

    def __matmul__(self, other: Any) -> Array:
        if isinstance(other, JAXSparse):
            raise NotImplementedError("matmul between two sparse objects.")
        other = jnp.asarray(other)
        data, other = jnp.promote_dtypes(self.data, other)
        shape = self.shape[::-1]
        if other.ndim == 1:
            return _csr_matvec(data, self.indices, self.indptr, other, shape=shape, transpose=True)
        if other.ndim == 2:
            return _csr_matmat(data, self.indices, self.indptr, other, shape=shape, transpose=True)
        raise NotImplementedError(f"matmul with object of shape {other.shape}")

    def tree_flatten(self) -> tuple[tuple[Array, Array, Array], dict[str, Any]]:
        return (self.data, self.indices, self.indptr), {"shape": self.shape}

    @classmethod
    def tree_unflatten(cls, aux_data: Any, children: Sequence[Any]) -> Self:
        obj: Self = _unflatten_compressed(cls, aux_data, children)
        return obj


# --- csr_todense --------------------------------------------------------------------------

csr_todense_p = UserPrimitive("csr_todense")


def csr_todense(mat: CSR) -> Array:
    """The dense matrix a CSR matrix stands for."""
    return _csr_todense(mat.data, mat.indices, mat.indptr, shape=mat.shape)


def _csr_todense(data: Array, indices: Array, indptr: Array, *, shape: Shape) -> Array:
    return csr_todense_p.bind(data, indices, indptr, shape=shape)


@csr_todense_p.def_impl
def csr_todense_impl(data: Array, indices: Array, indptr: Array, *, shape: Shape) -> Array:
    row, col = _csr_to_coo(indices, indptr)
    return _coo_todense(data, row, col, spinfo=COOInfo(shape=shape))


@csr_todense_p.def_abstract_eval
def _csr_todense_abstract_eval(
    data: Any, indices: Any, indptr: Any, *, shape: Shape
) -> ShapedArray:
    assert data.ndim == indices.ndim == indptr.ndim == 1
    assert indices.dtype == indptr.dtype
    assert data.shape == indices.shape
    assert indptr.shape[0] == shape[0] + 1
    return ShapedArray(tuple(shape), data.dtype)


def _csr_todense_jvp(
    data_dot: Array, data: Array, indices: Array, indptr: Array, *, shape: Shape
) -> Any:
    return _csr_todense(data_dot, indices, indptr, shape=shape)


def _csr_todense_transpose(ct: Array, data: Any, indices: Any, indptr: Any, *, shape: Shape) -> Any:
    assert is_undefined(data)
    if is_undefined(indices) or is_undefined(indptr):
        raise ValueError("Cannot transpose with respect to sparse indices")
    assert ct.shape == shape
    assert indices.aval.dtype == indptr.aval.dtype
    assert ct.dtype == data.aval.dtype
    return _csr_extract(indices, indptr, ct), indices, indptr


defjvp(csr_todense_p, _csr_todense_jvp, None, None)
transpose_rules.set(csr_todense_p, _csr_todense_transpose)


# --- csr_fromdense ------------------------------------------------------------------------

csr_fromdense_p = UserPrimitive("csr_fromdense")
csr_fromdense_p.multiple_results = True


def csr_fromdense(mat: Array, *, nse: Any = None, index_dtype: Any = np.int32) -> CSR:
    """The CSR form of a dense matrix, with `nse` stored entries (by default, its nonzeros)."""
    if nse is None:
        nse = int((mat != 0).sum())
    nse_int = operator.index(concrete_or_error(nse, "coo_fromdense nse argument"))
    return CSR(_csr_fromdense(mat, nse=nse_int, index_dtype=index_dtype), shape=mat.shape)


def _csr_fromdense(mat: Array, *, nse: int, index_dtype: Any = np.int32) -> tuple[Array, ...]:
    mat = jnp.asarray(mat)
    nse = operator.index(concrete_or_error(nse, "nse argument of csr_fromdense()"))
    return tuple(csr_fromdense_p.bind(mat, nse=nse, index_dtype=np.dtype(index_dtype)))


@csr_fromdense_p.def_impl
def csr_fromdense_impl(mat: Array, *, nse: int, index_dtype: Any) -> tuple[Array, Array, Array]:
    mat = jnp.asarray(mat)
    assert mat.ndim == 2
    m = mat.shape[0]
    row, col = jnp.nonzero(mat, size=nse)
    data = mat[row, col]
    true_nonzeros = jnp.arange(nse) < (mat != 0).sum()
    data = jnp.where(true_nonzeros, data, 0)
    row = jnp.where(true_nonzeros, row, m)
    indices = col.astype(index_dtype)
    counts = jnp.cumsum(jnp.bincount(row, length=m).astype(index_dtype))
    indptr = jnp.zeros(m + 1, dtype=index_dtype).at[1:].set(counts)
    return data, indices, indptr


@csr_fromdense_p.def_abstract_eval
def _csr_fromdense_abstract_eval(mat: Any, *, nse: int, index_dtype: Any) -> list[ShapedArray]:
    data = ShapedArray((nse,), mat.dtype)
    indices = ShapedArray((nse,), np.dtype(index_dtype))
    indptr = ShapedArray((mat.shape[0] + 1,), np.dtype(index_dtype))
    return [data, indices, indptr]


def _csr_fromdense_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, nse: int, index_dtype: Any
) -> tuple[Any, Any]:
    (mat,), (mat_dot,) = primals, tangents
    primals_out = _csr_fromdense(mat, nse=nse, index_dtype=index_dtype)
    data, indices, indptr = primals_out
    zero = type(mat_dot) is Zero
    data_dot = zero_of(data) if zero else _csr_extract(indices, indptr, mat_dot)
    return list(primals_out), [data_dot, zero_of(indices), zero_of(indptr)]


def _csr_fromdense_transpose(ct: Sequence[Any], mat: Any, *, nse: int, index_dtype: Any) -> Any:
    data, indices, indptr = ct
    assert len(data) == nse
    assert indices.dtype == indptr.dtype == index_dtype
    if isinstance(indices, Zero) or isinstance(indptr, Zero):
        raise ValueError("Cannot transpose with respect to sparse indices")
    assert is_undefined(mat)
    return [_csr_todense(data, indices, indptr, shape=mat.aval.shape)]


jvp_rules.set(csr_fromdense_p, _csr_fromdense_jvp)
transpose_rules.set(csr_fromdense_p, _csr_fromdense_transpose)


# --- csr_matvec ---------------------------------------------------------------------------

csr_matvec_p = UserPrimitive("csr_matvec")


def csr_matvec(mat: CSR, v: Array, transpose: bool = False) -> Array:
    """The product of a CSR matrix (transposed if `transpose`) and a dense vector."""
    data, indices, indptr = mat._bufs
    return _csr_matvec(data, indices, indptr, v, shape=mat.shape, transpose=transpose)


def _csr_matvec(
    data: Array, indices: Array, indptr: Array, v: Array, *, shape: Shape, transpose: bool = False
) -> Array:
    return csr_matvec_p.bind(data, indices, indptr, v, shape=shape, transpose=transpose)


@csr_matvec_p.def_impl
def csr_matvec_impl(
    data: Array, indices: Array, indptr: Array, v: Array, *, shape: Shape, transpose: bool
) -> Array:
    row, col = _csr_to_coo(indices, indptr)
    return _coo_matvec(data, row, col, v, spinfo=COOInfo(shape=shape), transpose=transpose)


@csr_matvec_p.def_abstract_eval
def _csr_matvec_abstract_eval(
    data: Any, indices: Any, indptr: Any, v: Any, *, shape: Shape, transpose: bool
) -> ShapedArray:
    assert len(shape) == 2
    assert v.ndim == data.ndim == indices.ndim == indptr.ndim == 1
    assert data.shape == indices.shape
    assert data.dtype == v.dtype
    assert indices.dtype == indptr.dtype
    assert indptr.shape[0] == shape[0] + 1
    out_shape = shape[1] if transpose else shape[0]
    assert v.shape[0] == (shape[0] if transpose else shape[1])
    return ShapedArray((out_shape,), data.dtype)


def _csr_matvec_jvp_mat(
    data_dot: Array, data: Array, indices: Array, indptr: Array, v: Array, *, shape: Shape,
    transpose: bool,
) -> Any:  # fmt: skip
    return _csr_matvec(data_dot, indices, indptr, v, shape=shape, transpose=transpose)


def _csr_matvec_jvp_vec(
    v_dot: Array, data: Array, indices: Array, indptr: Array, v: Array, *, shape: Shape,
    transpose: bool,
) -> Any:  # fmt: skip
    return _csr_matvec(data, indices, indptr, v_dot, shape=shape, transpose=transpose)


def _csr_matvec_transpose(
    ct: Array, data: Any, indices: Any, indptr: Any, v: Any, *, shape: Shape, transpose: bool
) -> Any:
    assert not is_undefined(indices)
    assert not is_undefined(indptr)
    if is_undefined(v):
        out = _csr_matvec(data, indices, indptr, ct, shape=shape, transpose=not transpose)
        return data, indices, indptr, out
    v = jnp.asarray(v)
    row, col = _csr_to_coo(indices, indptr)
    return jnp.getitem(ct, row) * jnp.getitem(v, col), indices, indptr, v


defjvp(csr_matvec_p, _csr_matvec_jvp_mat, None, None, _csr_matvec_jvp_vec)
transpose_rules.set(csr_matvec_p, _csr_matvec_transpose)


# --- csr_matmat ---------------------------------------------------------------------------

csr_matmat_p = UserPrimitive("csr_matmat")


def csr_matmat(mat: CSR, B: Array, *, transpose: bool = False) -> Array:
    """The product of a CSR matrix (transposed if `transpose`) and a dense matrix."""
    data, indices, indptr = mat._bufs
    return _csr_matmat(data, indices, indptr, B, shape=mat.shape, transpose=transpose)


def _csr_matmat(
    data: Array, indices: Array, indptr: Array, B: Array, *, shape: Shape, transpose: bool = False
) -> Array:
    return csr_matmat_p.bind(data, indices, indptr, B, shape=shape, transpose=transpose)


@csr_matmat_p.def_impl
def csr_matmat_impl(
    data: Array, indices: Array, indptr: Array, B: Array, *, shape: Shape, transpose: bool
) -> Array:
    row, col = _csr_to_coo(indices, indptr)
    return _coo_matmat(data, row, col, B, spinfo=COOInfo(shape=shape), transpose=transpose)


@csr_matmat_p.def_abstract_eval
def _csr_matmat_abstract_eval(
    data: Any, indices: Any, indptr: Any, B: Any, *, shape: Shape, transpose: bool
) -> ShapedArray:
    assert len(shape) == 2
    assert data.ndim == indices.ndim == indptr.ndim == 1
    assert B.ndim == 2
    assert data.shape == indices.shape
    assert data.dtype == B.dtype
    assert indices.dtype == indptr.dtype
    assert indptr.shape[0] == shape[0] + 1
    out_shape = shape[1] if transpose else shape[0]
    assert B.shape[0] == (shape[0] if transpose else shape[1])
    return ShapedArray((out_shape, B.shape[1]), data.dtype)


def _csr_matmat_jvp_left(
    data_dot: Array, data: Array, indices: Array, indptr: Array, B: Array, *, shape: Shape,
    transpose: bool,
) -> Any:  # fmt: skip
    return _csr_matmat(data_dot, indices, indptr, B, shape=shape, transpose=transpose)


def _csr_matmat_jvp_right(
    B_dot: Array, data: Array, indices: Array, indptr: Array, B: Array, *, shape: Shape,
    transpose: bool,
) -> Any:  # fmt: skip
    return _csr_matmat(data, indices, indptr, B_dot, shape=shape, transpose=transpose)


def _csr_matmat_transpose(
    ct: Array, data: Any, indices: Any, indptr: Any, B: Any, *, shape: Shape, transpose: bool
) -> Any:
    assert not is_undefined(indices)
    assert not is_undefined(indptr)
    if is_undefined(B):
        out = _csr_matmat(data, indices, indptr, ct, shape=shape, transpose=not transpose)
        return data, indices, indptr, out
    B = jnp.asarray(B)
    row, col = _csr_to_coo(indices, indptr)
    return (jnp.getitem(ct, row) * jnp.getitem(B, col)).sum(1), indices, indptr, B


defjvp(csr_matmat_p, _csr_matmat_jvp_left, None, None, _csr_matmat_jvp_right)
transpose_rules.set(csr_matmat_p, _csr_matmat_transpose)
