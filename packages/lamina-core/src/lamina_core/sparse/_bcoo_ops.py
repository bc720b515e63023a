"""BCOO functions built from lax operations on the buffers (no primitives of their own):
`bcoo_broadcast_in_dim`, `bcoo_reduce_sum`, `bcoo_multiply_dense`, `bcoo_multiply_sparse`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.sparse._bcoo import BCOO
from lamina_core.sparse._bcoo_convert import bcoo_extract_buffers
from lamina_core.sparse._bcoo_layout import tuple_replace, validate_bcoo
from lamina_core.sparse._bcoo_layout_update import bcoo_update_layout
from lamina_core.sparse._util import Shape, SparseInfo, nfold_vmap

Array = Any


def bcoo_broadcast_in_dim(
    mat: BCOO, *, shape: Shape, broadcast_dimensions: Sequence[int], sharding: Any = None
) -> BCOO:
    """`lax.broadcast_in_dim` of a BCOO array: its data duplicated to the target `shape`."""
    data, indices = _bcoo_broadcast_in_dim(
        mat.data,
        mat.indices,
        spinfo=mat._info,
        shape=shape,
        broadcast_dimensions=broadcast_dimensions,
    )
    return BCOO((data, indices), shape=shape)


def _bcoo_broadcast_in_dim(
    data: Array,
    indices: Array,
    *,
    spinfo: SparseInfo,
    shape: Shape,
    broadcast_dimensions: Sequence[int],
) -> tuple[Array, Array]:
    shape = tuple(shape)
    if len(spinfo.shape) != len(broadcast_dimensions):
        raise ValueError(
            f"spinfo.shape={spinfo.shape} and broadcast_dimensions={broadcast_dimensions} "
            "must have the same length"
        )
    props = validate_bcoo(data, indices, spinfo.shape)
    dims = list(broadcast_dimensions)
    batch_dims = dims[: props.n_batch]
    sparse_dims = dims[props.n_batch : props.n_batch + props.n_sparse]
    dense_dims = dims[props.n_batch + props.n_sparse :]
    if max(batch_dims, default=0) > min(sparse_dims, default=len(shape)):
        raise ValueError("Cannot mix batch and sparse dimensions during broadcast_in_dim")
    if max(sparse_dims, default=0) > min(dense_dims, default=len(shape)):
        raise ValueError("Cannot mix sparse and dense dimensions during broadcast_in_dim")
    new_n_batch = min(dims[props.n_batch :], default=len(shape))
    new_n_dense = props.n_dense and len(shape) - min(dims[-props.n_dense :])
    new_n_sparse = len(shape) - new_n_batch - new_n_dense
    if math.prod(spinfo.shape[props.n_batch : props.n_batch + props.n_sparse]) != math.prod(
        shape[new_n_batch : new_n_batch + new_n_sparse]
    ):
        raise NotImplementedError("Adding sparse dimensions with lengths != 1")
    new_data, new_indices = data, indices
    if (new_n_batch, new_n_dense) != (props.n_batch, props.n_dense):
        new_data = lax.broadcast_in_dim(
            new_data,
            (*shape[:new_n_batch], props.nse, *shape[new_n_batch + new_n_sparse :]),
            (*batch_dims, new_n_batch, *(b + 1 - new_n_sparse for b in dense_dims)),
        )
        new_indices = lax.broadcast_in_dim(
            new_indices,
            (*shape[:new_n_batch], props.nse, props.n_sparse),
            (*batch_dims, new_n_batch, new_n_batch + 1),
        )
    if new_n_sparse != props.n_sparse:
        ind_shape = (*shape[:new_n_batch], props.nse, new_n_sparse)
        ind = jnp.array(sparse_dims, int) - new_n_batch
        new_indices = jnp.at(jnp.zeros_like(new_indices, shape=ind_shape))[..., ind].set(
            new_indices
        )
    return new_data, new_indices


def bcoo_reduce_sum(mat: BCOO, *, axes: Sequence[int]) -> BCOO:
    """`mat` summed over `axes`."""
    data, indices, out_shape = _bcoo_reduce_sum(mat.data, mat.indices, spinfo=mat._info, axes=axes)
    return BCOO((data, indices), shape=out_shape)


def _bcoo_reduce_sum(
    data: Array, indices: Array, *, spinfo: SparseInfo, axes: Sequence[int]
) -> tuple[Array, Array, Shape]:
    shape = spinfo.shape
    assert all(0 <= a < len(shape) for a in axes)
    n_batch, n_sparse, _, nse = validate_bcoo(data, indices, shape)
    axes = sorted(set(axes))
    dense_axes = tuple(ax - n_sparse + 1 for ax in axes if ax >= n_batch + n_sparse)
    data = data.sum(dense_axes)
    if n_sparse:
        fill_value = jnp.expand_dims(
            jnp.array(shape[n_batch : n_batch + n_sparse], dtype=indices.dtype),
            tuple(range(indices.ndim - 1)),
        )
        mask = jnp.all(indices < fill_value, -1)
        if data.ndim > mask.ndim:
            mask = lax.expand_dims(mask, tuple(range(mask.ndim, data.ndim)))
        data = jnp.where(mask, data, 0)
    sparse_idx = [i for i in range(n_sparse) if i + n_batch not in axes]
    if not sparse_idx:
        indices = jnp.zeros(tuple_replace(indices.shape, n_batch + 1, 0), indices.dtype)
    else:
        indices = indices[..., np.array(sparse_idx)]
    batch_axes = {ax for ax in axes if ax < n_batch}
    for ax in batch_axes:
        if data.shape[ax] == 1:
            if indices.shape[ax] == 1:
                data = data * shape[ax]
            else:
                data = lax.broadcast_in_dim(
                    data, tuple_replace(data.shape, ax, shape[ax]), tuple(range(data.ndim))
                )
        elif indices.shape[ax] == 1:
            data = data.sum(ax)
        assert data.shape[ax] == indices.shape[ax]
    new_batch_dims = tuple(sorted(set(range(n_batch)) - batch_axes))
    new_batch_shape = tuple(data.shape[i] for i in new_batch_dims)
    new_nse = nse * math.prod([data.shape[i] for i in batch_axes])
    data = lax.reshape(
        data,
        (*new_batch_shape, new_nse, *data.shape[n_batch + 1 :]),
        (*new_batch_dims, *batch_axes, *range(n_batch, data.ndim)),
    )
    indices = lax.reshape(
        indices,
        (*new_batch_shape, new_nse, *indices.shape[n_batch + 1 :]),
        (*new_batch_dims, *batch_axes, *range(n_batch, indices.ndim)),
    )
    out_shape = tuple(shape[i] for i in range(len(shape)) if i not in axes)
    return data, indices, out_shape


def bcoo_multiply_dense(sp_mat: BCOO, v: Array) -> Array:
    """Elementwise product of a BCOO array and a dense one (broadcasting to the sparse shape):
    the data of the product, on `sp_mat`'s indices."""
    return _bcoo_multiply_dense(sp_mat.data, sp_mat.indices, v, spinfo=sp_mat._info)


def _bcoo_multiply_dense(data: Array, indices: Array, v: Array, *, spinfo: SparseInfo) -> Array:
    shape = spinfo.shape
    if v.ndim == 0:
        return lax.mul(data, v)
    if shape == tuple(v.shape):
        return lax.mul(data, bcoo_extract_buffers(indices, v))
    if lax.broadcast_shapes(v.shape, shape) != shape:
        raise NotImplementedError(
            "multiplication between sparse and dense is only implemented for cases "
            f"where the output shape matches the sparse matrix shape. Got shape={shape}, "
            f"v.shape={v.shape}"
        )
    v = lax.expand_dims(v, tuple(range(len(shape) - v.ndim)))
    props = validate_bcoo(data, indices, shape)

    @partial(nfold_vmap, N=props.n_batch)
    def _mul(data: Array, indices: Array, v: Array) -> Array:
        assert indices.shape[1] == v.ndim - props.n_dense
        ind = tuple(indices[:, i] for i in range(indices.shape[1]))
        ind = tuple(i if s != 1 else 0 for i, s in zip(ind, v.shape, strict=False))
        return data * v[ind]

    return _mul(data, indices, v)


def bcoo_multiply_sparse(lhs: BCOO, rhs: BCOO) -> BCOO:
    """Elementwise product of two BCOO arrays."""
    data, indices, out_shape = _bcoo_multiply_sparse(
        lhs.data, lhs.indices, rhs.data, rhs.indices, lhs_spinfo=lhs._info, rhs_spinfo=rhs._info
    )
    return BCOO((data, indices), shape=out_shape)


def _bcoo_multiply_sparse(
    lhs_data: Array,
    lhs_indices: Array,
    rhs_data: Array,
    rhs_indices: Array,
    *,
    lhs_spinfo: SparseInfo,
    rhs_spinfo: SparseInfo,
) -> tuple[Array, Array, Shape]:
    lhs_shape, rhs_shape = lhs_spinfo.shape, rhs_spinfo.shape
    lhs = validate_bcoo(lhs_data, lhs_indices, lhs_shape)
    rhs = validate_bcoo(rhs_data, rhs_indices, rhs_shape)
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(
            "bcoo_multiply_sparse: arrays must have same number of dimensions, "
            f"got {lhs_shape}, {rhs_shape}"
        )
    if lhs.n_dense != rhs.n_dense:
        raise NotImplementedError(
            f"bcoo_multiply_sparse: arrays with differing numbers of dense dimensions: {lhs}, {rhs}"
        )
    n_batch = min(lhs.n_batch, rhs.n_batch)
    mul = partial(
        _bcoo_multiply_sparse_unbatched,
        lhs_shape=lhs_shape[n_batch:],
        rhs_shape=rhs_shape[n_batch:],
    )
    data, indices = nfold_vmap(mul, n_batch)(lhs_data, lhs_indices, rhs_data, rhs_indices)
    return data, indices, tuple(jnp.broadcast_shapes(lhs_shape, rhs_shape))


def _bcoo_multiply_sparse_unbatched(
    lhs_data: Array,
    lhs_indices: Array,
    rhs_data: Array,
    rhs_indices: Array,
    *,
    lhs_shape: Shape,
    rhs_shape: Shape,
) -> tuple[Array, Array]:
    lhs = validate_bcoo(lhs_data, lhs_indices, lhs_shape)
    rhs = validate_bcoo(rhs_data, rhs_indices, rhs_shape)
    assert lhs.n_batch == 0 or rhs.n_batch == 0  # the caller maps the common batch dims
    if lhs.n_batch:
        lhs_data, lhs_indices = bcoo_update_layout(
            BCOO((lhs_data, lhs_indices), shape=lhs_shape), n_batch=0
        )._bufs
        lhs = validate_bcoo(lhs_data, lhs_indices, lhs_shape)
    elif rhs.n_batch:
        rhs_data, rhs_indices = bcoo_update_layout(
            BCOO((rhs_data, rhs_indices), shape=rhs_shape), n_batch=0
        )._bufs
        rhs = validate_bcoo(rhs_data, rhs_indices, rhs_shape)
    dims = jnp.array(
        [
            i
            for i, (s1, s2) in enumerate(
                zip(lhs_shape[: lhs.n_sparse], rhs_shape[: rhs.n_sparse], strict=True)
            )
            if s1 != 1 and s2 != 1
        ],
        dtype=int,
    )
    nse = lhs.nse * rhs.nse
    mask = jnp.all(lhs_indices[:, None, dims] == rhs_indices[None, :, dims], -1)
    i_lhs, i_rhs = jnp.nonzero(mask, size=nse, fill_value=(lhs.nse, rhs.nse))
    data = jnp.at(lhs_data)[i_lhs].get(mode="fill", fill_value=0) * jnp.at(rhs_data)[i_rhs].get(
        mode="fill", fill_value=0
    )
    indices = jnp.maximum(
        jnp.at(lhs_indices)[i_lhs].get(mode="fill", fill_value=max(lhs_shape, default=0)),
        jnp.at(rhs_indices)[i_rhs].get(mode="fill", fill_value=max(rhs_shape, default=0)),
    )
    return data, indices


__all__ = [
    "bcoo_broadcast_in_dim",
    "bcoo_multiply_dense",
    "bcoo_multiply_sparse",
    "bcoo_reduce_sum",
]
