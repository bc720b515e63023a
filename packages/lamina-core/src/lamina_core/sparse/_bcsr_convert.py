"""BCSR's conversion primitives on raw buffers: `bcsr_fromdense`, `bcsr_todense` and
`bcsr_extract`, each with its abstract evaluation, eager impl, jvp, transpose and batching
rules; the layout checks (`validate_bcsr`) and the conversions to and from BCOO indices.

A BCSR array is `data` (`batch + (nse,) + dense`), `indices` (`batch + (nse,)`: the column of
each stored entry) and `indptr` (`batch + (rows + 1,)`), with exactly two sparse dimensions.
The impls convert to BCOO and use BCOO's functions; on CPU JAX lowers each primitive as its
impl, and the umbrella's `bcsr` module registers that lowering. Knows no `BCSR` object.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.interpreters import (
    AxisData,
    BatchDim,
    Zero,
    batching_rules,
    defjvp,
    is_undefined,
    jvp_rules,
    transpose_rules,
    zero_of,
)
from lamina_core.ir import ShapedArray
from lamina_core.sparse._bcoo import BCOO, bcoo_fromdense
from lamina_core.sparse._bcoo_convert import bcoo_extract_buffers
from lamina_core.sparse._bcoo_layout import validate_bcoo_indices
from lamina_core.sparse._util import (
    SparseInfo,
    _csr_to_coo,
    nfold_vmap,
)
from lamina_core.trace import UserPrimitive, concrete_or_error

Array = Any


def batch_dims_to_front(
    args: Sequence[Any], dims: Sequence[BatchDim], spinfo: SparseInfo, batch_size: Any = None
) -> tuple[Any, Any, Any, SparseInfo]:
    indices = args[1]
    n_batch = indices.ndim - 1 + int(dims[1] is None)
    if not all(b is None or 0 <= b < n_batch for b in dims):
        raise NotImplementedError(
            "batch_dims must be None or satisfy 0 < dim < n_batch. "
            f"Got batch_dims={tuple(dims)} for n_batch={n_batch}."
        )
    moved = [
        lax.expand_dims(arg, [0]) if bdim is None else jnp.moveaxis(arg, bdim, 0)
        for arg, bdim in zip(args, dims, strict=True)
    ]
    if batch_size is None:
        batch_size = max(a.shape[d] for a, d in zip(args, dims, strict=True) if d is not None)
    batched = SparseInfo((batch_size, *spinfo.shape), spinfo.indices_sorted, spinfo.unique_indices)
    return moved[0], moved[1], moved[2], batched


class BCSRProperties(NamedTuple):
    n_batch: int
    n_dense: int
    nse: int


def _compatible(shape1: Sequence[int], shape2: Sequence[int]) -> bool:
    return all(s1 in (1, s2) for s1, s2 in zip(shape1, shape2, strict=True))


def validate_bcsr_indices(indices: Any, indptr: Any, shape: Sequence[int]) -> BCSRProperties:
    assert jnp.issubdtype(indices.dtype, jnp.integer)
    assert jnp.issubdtype(indptr.dtype, jnp.integer)
    shape = tuple(shape)
    nse = indices.shape[-1]
    n_batch = indices.ndim - 1
    n_dense = len(shape) - n_batch - 2
    assert n_dense >= 0
    if not _compatible(indices.shape[:n_batch], shape[:n_batch]):
        raise ValueError(
            f"indices batch dimensions not compatible for indices.shape={indices.shape}, "
            f"shape={shape}"
        )
    if not _compatible(indptr.shape[:n_batch], shape[:n_batch]):
        raise ValueError(
            f"indptr batch dimensions not compatible for indptr.shape={indptr.shape}, shape={shape}"
        )
    if tuple(indptr.shape[n_batch:]) != (shape[n_batch] + 1,):
        raise ValueError("indptr shape must match the matrix shape plus 1.")
    return BCSRProperties(n_batch=n_batch, n_dense=n_dense, nse=nse)


def validate_bcsr(data: Any, indices: Any, indptr: Any, shape: Sequence[int]) -> BCSRProperties:
    props = validate_bcsr_indices(indices, indptr, shape)
    shape = tuple(shape)
    n_batch, n_dense, nse = props
    n_sparse = len(shape) - n_batch - n_dense
    if n_sparse != 2:
        raise ValueError(f"BCSR array must have 2 sparse dimensions; {n_sparse} is given.")
    if not _compatible(data.shape[:n_batch], shape[:n_batch]):
        raise ValueError(
            f"data batch dimensions not compatible for data.shape={data.shape}, shape={shape}"
        )
    if tuple(data.shape[-(n_dense + 1) :]) != (nse, *shape[n_batch + 2 :]):
        raise ValueError(
            f"Invalid data.shape={data.shape} for nse={nse}, n_batch={n_batch}, n_dense={n_dense}"
        )
    return props


def bcsr_to_bcoo(indices: Array, indptr: Array, *, shape: Sequence[int]) -> Array:
    """The BCOO indices of BCSR (indices, indptr)."""
    n_batch, _, _ = validate_bcsr_indices(indices, indptr, shape)
    csr_to_coo = nfold_vmap(_csr_to_coo, n_batch)
    return jnp.stack(csr_to_coo(indices, indptr), axis=indices.ndim)


def bcoo_to_bcsr(indices: Array, *, shape: Sequence[int], index_dtype: Any) -> tuple[Array, Array]:
    """BCSR (indices, indptr) of BCOO indices sorted within each batch."""
    n_batch, n_sparse, _, _ = validate_bcoo_indices(indices, shape)
    if n_sparse != 2:
        raise ValueError("Must have 2 sparse dimensions to be converted to BCSR.")
    n_rows = shape[n_batch]

    @partial(nfold_vmap, N=n_batch, broadcasted=False)
    def get_ptr(i: Array) -> Array:
        indptr = jnp.zeros(n_rows + 1, index_dtype)
        counts = jnp.cumsum(jnp.bincount(i, length=n_rows).astype(index_dtype))
        return indptr.at[1:].set(counts)

    return indices[..., 1], get_ptr(indices[..., 0])


# --- bcsr_fromdense -----------------------------------------------------------------------

bcsr_fromdense_p = UserPrimitive("bcsr_fromdense")
bcsr_fromdense_p.multiple_results = True

TRACED_NSE_ERROR = """
The error arose for the nse argument of bcsr_fromdense. In order for
BCSR.fromdense() to be used in traced/compiled code, you must pass a concrete
value to the nse (number of stored elements) argument.
"""


def bcsr_fromdense_buffers(
    mat: Array, *, nse: int, n_batch: int = 0, n_dense: int = 0, index_dtype: Any = jnp.int32
) -> tuple[Array, Array, Array]:
    mat = jnp.asarray(mat)
    nse = operator.index(concrete_or_error(nse, TRACED_NSE_ERROR))
    data, indices, indptr = bcsr_fromdense_p.bind(
        mat, nse=nse, n_batch=n_batch, n_dense=n_dense, index_dtype=index_dtype
    )
    return data, indices, indptr


@bcsr_fromdense_p.def_impl
def bcsr_fromdense_impl(
    mat: Array, *, nse: int, n_batch: int, n_dense: int, index_dtype: Any
) -> tuple[Array, Array, Array]:
    mat = jnp.asarray(mat)
    if mat.ndim - n_dense - n_batch != 2:
        raise ValueError("bcsr_fromdense: must have 2 sparse dimensions.")
    bcoo_mat = bcoo_fromdense(
        mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense, n_batch=n_batch
    )
    indices, indptr = bcoo_to_bcsr(bcoo_mat.indices, shape=mat.shape, index_dtype=index_dtype)
    return bcoo_mat.data, indices, indptr


@bcsr_fromdense_p.def_abstract_eval
def _bcsr_fromdense_abstract_eval(
    mat: Any, *, nse: int, n_batch: int, n_dense: int, index_dtype: Any
) -> list[ShapedArray]:
    n_sparse = mat.ndim - n_batch - n_dense
    if n_sparse != 2:
        raise ValueError("bcsr_fromdense: must have 2 sparse dimensions.")
    shape = tuple(mat.shape)
    data_shape = (*shape[:n_batch], nse, *shape[n_batch + n_sparse :])
    index_dtype = np.dtype(index_dtype)
    return [
        ShapedArray(data_shape, mat.dtype),
        ShapedArray((*shape[:n_batch], nse), index_dtype),
        ShapedArray((*shape[:n_batch], shape[n_batch] + 1), index_dtype),
    ]


def _bcsr_fromdense_batch(
    axis_data: AxisData, args: Sequence[Any], dims: Sequence[BatchDim], *, nse: int,
    n_batch: int, n_dense: int, index_dtype: Any,
) -> tuple[Any, Any]:  # fmt: skip
    (mat,), (bdim,) = args, dims
    if bdim is None or not 0 <= bdim <= n_batch:
        raise ValueError(f"Expected 0 < bdim <= n_batch; got bdim={bdim}, n_batch={n_batch}")
    out = bcsr_fromdense_buffers(
        mat, nse=nse, n_batch=n_batch + 1, n_dense=n_dense, index_dtype=index_dtype
    )
    return list(out), [bdim, bdim, bdim]


def _bcsr_fromdense_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, nse: int, n_batch: int, n_dense: int,
    index_dtype: Any,
) -> tuple[Any, Any]:  # fmt: skip
    (mat,), (mat_dot,) = primals, tangents
    primals_out = bcsr_fromdense_buffers(
        mat, nse=nse, n_batch=n_batch, n_dense=n_dense, index_dtype=index_dtype
    )
    data, indices, indptr = primals_out
    zero = type(mat_dot) is Zero
    data_dot = zero_of(data) if zero else bcsr_extract(indices, indptr, mat_dot)
    return list(primals_out), [data_dot, zero_of(indices), zero_of(indptr)]


def _bcsr_fromdense_transpose(
    ct: Sequence[Any], mat: Any, *, nse: int, n_batch: int, n_dense: int, index_dtype: Any
) -> Any:
    data, indices, indptr = ct
    shape = tuple(mat.aval.shape)
    n_sparse = len(shape) - n_batch - n_dense
    assert data.shape == (*shape[:n_batch], nse, *shape[n_batch + n_sparse :])
    assert indices.shape == (*shape[:n_batch], n_sparse, nse)
    assert indptr.shape == (*shape[:n_batch], shape[n_batch] + 1)
    assert indices.dtype == index_dtype
    assert indptr.dtype == index_dtype
    if isinstance(indices, Zero) or isinstance(indptr, Zero):
        raise ValueError("Cannot transpose with respect to sparse indices")
    assert is_undefined(mat)
    return [bcsr_todense_buffers(data, indices, indptr, spinfo=SparseInfo(shape))]


jvp_rules.set(bcsr_fromdense_p, _bcsr_fromdense_jvp)
transpose_rules.set(bcsr_fromdense_p, _bcsr_fromdense_transpose)
batching_rules.set(bcsr_fromdense_p, _bcsr_fromdense_batch)


# --- bcsr_todense -------------------------------------------------------------------------

bcsr_todense_p = UserPrimitive("bcsr_todense")


def bcsr_todense_buffers(
    data: Array, indices: Array, indptr: Array, *, spinfo: SparseInfo
) -> Array:
    args = (jnp.asarray(data), jnp.asarray(indices), jnp.asarray(indptr))
    return bcsr_todense_p.bind(*args, spinfo=spinfo)


@bcsr_todense_p.def_impl
def bcsr_todense_impl(data: Array, indices: Array, indptr: Array, *, spinfo: SparseInfo) -> Array:
    shape = spinfo.shape
    bcoo_indices = bcsr_to_bcoo(indices, indptr, shape=shape)
    return BCOO((data, bcoo_indices), shape=shape).todense()


@bcsr_todense_p.def_abstract_eval
def _bcsr_todense_abstract_eval(
    data: Any, indices: Any, indptr: Any, *, spinfo: SparseInfo
) -> ShapedArray:
    validate_bcsr(data, indices, indptr, spinfo.shape)
    return ShapedArray(tuple(spinfo.shape), data.dtype)


def _bcsr_todense_batch(
    axis_data: AxisData, args: Sequence[Any], dims: Sequence[BatchDim], *, spinfo: SparseInfo
) -> tuple[Any, BatchDim]:
    data, indices, indptr, spinfo = batch_dims_to_front(args, dims, spinfo)
    return bcsr_todense_buffers(data, indices, indptr, spinfo=spinfo), 0


def _bcsr_todense_jvp(
    data_dot: Array, data: Array, indices: Array, indptr: Array, *, spinfo: SparseInfo
) -> Any:
    return bcsr_todense_buffers(data_dot, indices, indptr, spinfo=spinfo)


def _bcsr_todense_transpose(
    ct: Array, data: Any, indices: Any, indptr: Any, *, spinfo: SparseInfo
) -> Any:
    assert is_undefined(data)
    if is_undefined(indices) or is_undefined(indptr):
        raise ValueError("Cannot transpose with respect to sparse indices")
    assert ct.shape == spinfo.shape
    assert ct.dtype == data.aval.dtype
    return bcsr_extract(indices, indptr, ct), indices, indptr


defjvp(bcsr_todense_p, _bcsr_todense_jvp, None, None)
transpose_rules.set(bcsr_todense_p, _bcsr_todense_transpose)
batching_rules.set(bcsr_todense_p, _bcsr_todense_batch)


# --- bcsr_extract -------------------------------------------------------------------------

bcsr_extract_p = UserPrimitive("bcsr_extract")


def bcsr_extract(indices: Array, indptr: Array, mat: Array) -> Array:
    """The values of the dense `mat` at BCSR (indices, indptr): BCSR data."""
    return bcsr_extract_p.bind(indices, indptr, mat)


@bcsr_extract_p.def_impl
def bcsr_extract_impl(indices: Array, indptr: Array, mat: Array) -> Array:
    mat = jnp.asarray(mat)
    bcoo_indices = bcsr_to_bcoo(indices, indptr, shape=mat.shape)
    return bcoo_extract_buffers(bcoo_indices, mat)


@bcsr_extract_p.def_abstract_eval
def _bcsr_extract_abstract_eval(indices: Any, indptr: Any, mat: Any) -> ShapedArray:
    n_batch, n_dense, nse = validate_bcsr_indices(indices, indptr, mat.shape)
    shape = tuple(mat.shape)
    return ShapedArray((*shape[:n_batch], nse, *shape[len(shape) - n_dense :]), mat.dtype)


def _bcsr_extract_jvp(arr_dot: Array, indices: Array, indptr: Array, arr: Array) -> Any:
    assert arr_dot.shape == arr.shape
    return bcsr_extract(indices, indptr, arr_dot)


def _bcsr_extract_transpose(ct: Array, indices: Any, indptr: Any, arr: Any) -> Any:
    assert is_undefined(arr)
    if is_undefined(indices) or is_undefined(indptr):
        raise ValueError("Cannot transpose with respect to sparse indices")
    assert ct.dtype == arr.aval.dtype
    dense = bcsr_todense_buffers(ct, indices, indptr, spinfo=SparseInfo(tuple(arr.aval.shape)))
    return indices, indptr, dense


def _bcsr_extract_batch(
    axis_data: AxisData, args: Sequence[Any], dims: Sequence[BatchDim]
) -> tuple[Any, BatchDim]:
    indices, indptr, arr = args
    bdims = {b for b in dims if b is not None}
    if len(bdims) != 1:
        raise NotImplementedError("bcoo_extract with unequal batch dimensions.")
    bdim = next(iter(bdims))
    if dims[0] is None:
        indices = lax.expand_dims(indices, (bdim,))
    if dims[1] is None:
        indptr = lax.expand_dims(indptr, (bdim,))
    if dims[2] is None:
        result_shape = list(arr.shape)
        result_shape.insert(bdim, indices.shape[bdim])
        arr = lax.broadcast_in_dim(arr, result_shape, (bdim,))
    n_batch = indices.ndim - 1
    if bdim >= n_batch:
        raise ValueError(
            f"batch_dims={tuple(dims)} out of range for indices with n_batch={n_batch}"
        )
    return bcsr_extract(indices, indptr, arr), bdim


defjvp(bcsr_extract_p, None, None, _bcsr_extract_jvp)
transpose_rules.set(bcsr_extract_p, _bcsr_extract_transpose)
batching_rules.set(bcsr_extract_p, _bcsr_extract_batch)
