"""BCOO's conversion primitives on raw buffers: `bcoo_todense`, `bcoo_fromdense` and
`bcoo_extract`, each with its rules (abstract evaluation, eager impl, jvp, transpose, vmap);
and the layout checks shared by every BCOO primitive (`validate_bcoo`).

A BCOO array is `data` (`batch + (nse,) + dense` shape) and `indices` (`batch + (nse,
n_sparse)`); batch dimensions of size 1 broadcast. Lowering is registered by the umbrella
package (JAX lowers these primitives through their impls); this module knows no `BCOO` object.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from functools import partial
from typing import Any

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
from lamina_core.sparse._bcoo_layout import (
    batch_dims_to_front,
    tuple_replace,
    unique_indices,
    validate_bcoo,
    validate_bcoo_indices,
)
from lamina_core.sparse._util import Shape, SparseInfo, compiled_impl, nfold_vmap
from lamina_core.trace import UserPrimitive, concrete_or_error

Array = Any


def _batch_and_sparse_index(
    shape: Shape, indices: Any, n_batch: int, n_sparse: int
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """Index arrays addressing, for each stored element, its batch and sparse position."""
    ind_slices = tuple(
        np.zeros(s, int) if i_s == 1 else np.arange(s)
        for s, i_s in zip(shape[:n_batch], indices.shape[:n_batch], strict=True)
    )
    grid = tuple(np.meshgrid(*ind_slices, indexing="ij", sparse=True))
    sparse_ind = tuple(indices[(*grid, slice(None), i)] for i in range(n_sparse))
    batch_slices = tuple(np.arange(s) for s in shape[:n_batch])
    batch_ind = tuple(np.meshgrid(*batch_slices, np.arange(1), indexing="ij", sparse=True))[:-1]
    return batch_ind, sparse_ind


# --- bcoo_todense -------------------------------------------------------------------------

bcoo_todense_p = UserPrimitive("bcoo_todense")


def bcoo_todense_buffers(data: Array, indices: Array, *, spinfo: SparseInfo) -> Array:
    """The dense array of shape `spinfo.shape` the buffers stand for."""
    return bcoo_todense_p.bind(jnp.asarray(data), jnp.asarray(indices), spinfo=spinfo)


@bcoo_todense_p.def_impl
def bcoo_todense_impl(data: Array, indices: Array, *, spinfo: SparseInfo) -> Array:
    shape = spinfo.shape
    n_batch, n_sparse, _, _ = validate_bcoo(data, indices, shape)
    batch_ind, sparse_ind = _batch_and_sparse_index(shape, indices, n_batch, n_sparse)
    if not sparse_ind:
        data = data.sum(n_batch, keepdims=bool(batch_ind), dtype=data.dtype)
    return jnp.at(jnp.zeros(shape, data.dtype))[batch_ind + sparse_ind].add(data)


@bcoo_todense_p.def_abstract_eval
def _bcoo_todense_abstract_eval(data: Any, indices: Any, *, spinfo: SparseInfo) -> ShapedArray:
    validate_bcoo(data, indices, spinfo.shape)
    return ShapedArray(tuple(spinfo.shape), data.dtype)


def _bcoo_todense_jvp(data_dot: Array, data: Array, indices: Array, *, spinfo: SparseInfo) -> Any:
    return bcoo_todense_buffers(data_dot, indices, spinfo=spinfo)


def _bcoo_todense_transpose(ct: Array, data: Any, indices: Any, *, spinfo: SparseInfo) -> Any:
    assert is_undefined(data)
    if is_undefined(indices):
        raise ValueError("Cannot transpose with respect to sparse indices")
    assert ct.shape == spinfo.shape
    assert ct.dtype == data.aval.dtype
    return bcoo_extract_buffers(indices, ct), indices


def _bcoo_todense_batch(
    axis_data: AxisData, args: Sequence[Any], dims: Sequence[BatchDim], *, spinfo: SparseInfo
) -> tuple[Any, BatchDim]:
    data, indices, spinfo = batch_dims_to_front(args, dims, spinfo)
    return bcoo_todense_buffers(data, indices, spinfo=spinfo), 0


defjvp(bcoo_todense_p, _bcoo_todense_jvp, None)
transpose_rules.set(bcoo_todense_p, _bcoo_todense_transpose)
batching_rules.set(bcoo_todense_p, _bcoo_todense_batch)


# --- bcoo_fromdense -----------------------------------------------------------------------

bcoo_fromdense_p = UserPrimitive("bcoo_fromdense")
bcoo_fromdense_p.multiple_results = True

TRACED_NSE_ERROR = """
The error arose for the nse argument of bcoo_fromdense. In order for
BCOO.fromdense() to be used in traced/compiled code, you must pass a concrete
value to the nse (number of stored elements) argument.
"""


def concrete_nse(nse: Any) -> int:
    return operator.index(concrete_or_error(nse, TRACED_NSE_ERROR))


def bcoo_fromdense_buffers(
    mat: Array, *, nse: Any, n_batch: int = 0, n_dense: int = 0, index_dtype: Any = np.int32
) -> tuple[Array, Array]:
    """(data, indices) of the dense `mat` with `nse` stored elements per batch."""
    mat = jnp.asarray(mat)
    out = bcoo_fromdense_p.bind(
        mat, nse=concrete_nse(nse), n_batch=n_batch, n_dense=n_dense, index_dtype=index_dtype
    )
    return out[0], out[1]


@bcoo_fromdense_p.def_impl
def bcoo_fromdense_impl(
    mat: Array, *, nse: int, n_batch: int, n_dense: int, index_dtype: Any
) -> tuple[Array, Array]:
    mat = jnp.asarray(mat)
    n_sparse = mat.ndim - n_dense - n_batch
    mask = mat != 0
    if n_dense > 0:
        mask = mask.any([-(i + 1) for i in range(n_dense)])

    @partial(nfold_vmap, N=n_batch, broadcasted=False)
    def _nonzero(a: Array) -> Any:
        if a.ndim:
            return jnp.nonzero(a, size=nse, fill_value=a.shape[:n_sparse])
        return ()

    found = _nonzero(mask)
    if not found:
        indices = jnp.zeros((*mask.shape[:n_batch], nse, 0), index_dtype)
    else:
        indices = jnp.moveaxis(jnp.array(found, index_dtype), 0, n_batch + 1)
    data = bcoo_extract_buffers(indices, mat)
    true_nse = mask.sum(tuple(range(n_batch, mask.ndim)))[..., None]
    iota = lax.broadcasted_iota(true_nse.dtype, (1,) * n_batch + (nse,), n_batch)
    true_nonzeros = (iota < true_nse)[(n_batch + 1) * (slice(None),) + n_dense * (None,)]
    return jnp.where(true_nonzeros, data, 0), indices


@bcoo_fromdense_p.def_abstract_eval
def _bcoo_fromdense_abstract_eval(
    mat: Any, *, nse: int, n_batch: int, n_dense: int, index_dtype: Any
) -> tuple[ShapedArray, ShapedArray]:
    n_sparse = mat.ndim - n_batch - n_dense
    data_shape = (*mat.shape[:n_batch], nse, *mat.shape[n_batch + n_sparse :])
    index_shape = (*mat.shape[:n_batch], nse, n_sparse)
    return ShapedArray(data_shape, mat.dtype), ShapedArray(index_shape, np.dtype(index_dtype))


def _bcoo_fromdense_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], **params: Any
) -> tuple[Any, Any]:
    (mat,), (mat_dot,) = primals, tangents
    data, indices = bcoo_fromdense_buffers(mat, **params)
    data_dot = zero_of(data) if type(mat_dot) is Zero else bcoo_extract_buffers(indices, mat_dot)
    return (data, indices), (data_dot, zero_of(indices))


def _bcoo_fromdense_transpose(
    ct: Sequence[Any], mat: Any, *, nse: int, n_batch: int, n_dense: int, index_dtype: Any
) -> Any:
    data, indices = ct
    n_sparse = mat.aval.ndim - n_batch - n_dense
    assert data.shape == (*mat.aval.shape[:n_batch], nse, *mat.aval.shape[n_batch + n_sparse :])
    if isinstance(indices, Zero):
        raise ValueError("Cannot transpose with respect to sparse indices")
    assert is_undefined(mat)
    return [bcoo_todense_buffers(data, indices, spinfo=SparseInfo(mat.aval.shape))]


def _bcoo_fromdense_batch(
    axis_data: AxisData,
    args: Sequence[Any],
    dims: Sequence[BatchDim],
    *,
    nse: int,
    n_batch: int,
    n_dense: int,
    index_dtype: Any,
) -> tuple[Any, Any]:
    (mat,), (bdim,) = args, dims
    if bdim is None or not 0 <= bdim <= n_batch:
        raise ValueError(f"Expected 0 < bdim <= n_batch; got bdim={bdim}, n_batch={n_batch}")
    out = bcoo_fromdense_buffers(
        mat, nse=nse, n_batch=n_batch + 1, n_dense=n_dense, index_dtype=index_dtype
    )
    return list(out), [bdim, bdim]


jvp_rules.set(bcoo_fromdense_p, _bcoo_fromdense_jvp)
transpose_rules.set(bcoo_fromdense_p, _bcoo_fromdense_transpose)
batching_rules.set(bcoo_fromdense_p, _bcoo_fromdense_batch)


# --- bcoo_extract -------------------------------------------------------------------------

bcoo_extract_p = UserPrimitive("bcoo_extract")


def bcoo_extract_buffers(indices: Array, arr: Array, *, assume_unique: bool = True) -> Array:
    """The values of the dense `arr` at BCOO `indices` (BCOO data for those indices); with
    `assume_unique=False`, a duplicated index's value is given once, at its first place."""
    return bcoo_extract_p.bind(indices, arr, assume_unique=assume_unique)


@bcoo_extract_p.def_impl
def bcoo_extract_impl(indices: Array, arr: Array, *, assume_unique: bool) -> Array:
    arr = jnp.asarray(arr)
    props = original = validate_bcoo_indices(indices, arr.shape)
    sort_ind: Any = ...
    if not assume_unique:
        indices, sort_ind = unique_indices(indices, shape=arr.shape, return_index=True)
        props = validate_bcoo_indices(indices, arr.shape)
    batch_ind, sparse_ind = _batch_and_sparse_index(
        arr.shape, indices, props.n_batch, props.n_sparse
    )
    if not sparse_ind + batch_ind:
        result = arr[None]
    else:
        result = jnp.at(arr)[batch_ind + sparse_ind].get(mode="fill", fill_value=0)
    if props.n_sparse == 0 and props.nse != 1:
        if assume_unique:
            result = lax.broadcast_in_dim(
                result, tuple_replace(result.shape, props.n_batch, props.nse), range(result.ndim)
            )
        else:
            out_shape = tuple_replace(result.shape, props.n_batch, original.nse)
            ind = (*(props.n_batch * (slice(None),)), slice(1))
            result = jnp.at(jnp.zeros_like(result, shape=out_shape))[ind].set(result)
    if not assume_unique:
        unbatched_shape = (original.nse, *result.shape[props.n_batch + 1 :])

        def scatter(r: Array, i: Array) -> Array:
            return jnp.at(jnp.zeros_like(r, shape=unbatched_shape))[i].add(r)

        result = nfold_vmap(scatter, props.n_batch, broadcasted=False)(result, sort_ind)
    return result


@bcoo_extract_p.def_abstract_eval
def _bcoo_extract_abstract_eval(indices: Any, arr: Any, *, assume_unique: bool) -> ShapedArray:
    _ = bool(assume_unique)
    n_batch, _, n_dense, nse = validate_bcoo_indices(indices, arr.shape)
    out_shape = (*arr.shape[:n_batch], nse, *arr.shape[arr.ndim - n_dense :])
    return ShapedArray(out_shape, arr.dtype)


def _bcoo_extract_jvp(arr_dot: Array, indices: Array, arr: Array, *, assume_unique: bool) -> Any:
    assert arr_dot.shape == arr.shape
    return bcoo_extract_buffers(indices, arr_dot, assume_unique=assume_unique)


def _bcoo_extract_transpose(ct: Array, indices: Any, arr: Any, *, assume_unique: bool) -> Any:
    if not assume_unique:
        raise NotImplementedError("transpose of bcoo_extract with assume_unique=False")
    assert is_undefined(arr)
    if is_undefined(indices):
        raise ValueError("Cannot transpose with respect to sparse indices")
    assert ct.dtype == arr.aval.dtype
    return indices, bcoo_todense_buffers(ct, indices, spinfo=SparseInfo(arr.aval.shape))


def _bcoo_extract_batch(
    axis_data: AxisData, args: Sequence[Any], dims: Sequence[BatchDim], *, assume_unique: bool
) -> tuple[Any, BatchDim]:
    indices, arr = args
    assert any(b is not None for b in dims)
    if dims[0] is None:
        bdim = dims[1]
        assert bdim is not None
        indices = lax.expand_dims(indices, (bdim,))
    elif dims[1] is None:
        bdim = dims[0]
        result_shape = list(arr.shape)
        result_shape.insert(bdim, indices.shape[bdim])
        arr = lax.broadcast_in_dim(arr, result_shape, (bdim,))
    else:
        if dims[0] != dims[1]:
            raise NotImplementedError("bcoo_extract with unequal batch dimensions.")
        bdim = dims[0]
    n_batch = indices.ndim - 2
    if bdim >= n_batch:
        raise ValueError(
            f"batch_dims={tuple(dims)} out of range for indices with n_batch={n_batch}"
        )
    return bcoo_extract_buffers(indices, arr, assume_unique=assume_unique), bdim


defjvp(bcoo_extract_p, None, _bcoo_extract_jvp)
transpose_rules.set(bcoo_extract_p, _bcoo_extract_transpose)
batching_rules.set(bcoo_extract_p, _bcoo_extract_batch)

# Eagerly, each primitive runs as one compiled program of its impl.
bcoo_todense_p.def_impl(compiled_impl(bcoo_todense_impl, ("spinfo",)))
bcoo_fromdense_p.def_impl(
    compiled_impl(bcoo_fromdense_impl, ("nse", "n_batch", "n_dense", "index_dtype"))
)
bcoo_extract_p.def_impl(compiled_impl(bcoo_extract_impl, ("assume_unique",)))
