"""BCOO versions of lax's shape operations, built from lax operations on the buffers:
`bcoo_squeeze`, `bcoo_rev`, `bcoo_slice`, `bcoo_dynamic_slice`, `bcoo_reshape`,
`bcoo_concatenate`."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.ir import ShapedArray, abstract_eval_rules
from lamina_core.sparse._bcoo import BCOO, bcoo_set_nse
from lamina_core.sparse._bcoo_dot import validate_permutation
from lamina_core.sparse._bcoo_dups import bcoo_sum_duplicates_buffers
from lamina_core.sparse._bcoo_layout_update import bcoo_update_layout
from lamina_core.sparse._util import SparseInfo


def _canonical_axis(axis: int, ndim: int) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def bcoo_squeeze(arr: BCOO, *, dimensions: Sequence[int]) -> BCOO:
    """`lax.squeeze` of a BCOO array: its size-1 `dimensions` removed."""
    dimensions = tuple(_canonical_axis(d, arr.ndim) for d in dimensions)
    if any(arr.shape[d] != 1 for d in dimensions):
        raise ValueError(
            "cannot select an axis to squeeze out which has size not equal to one, "
            f"got shape={arr.shape} and dimensions={dimensions}"
        )
    batch_dims = tuple(d for d in dimensions if d < arr.n_batch)
    sparse_dims = np.array(
        [i for i in range(arr.n_sparse) if i + arr.n_batch not in dimensions], dtype=int
    )
    dense_dims = tuple(d - arr.n_sparse + 1 for d in dimensions if d >= arr.n_batch + arr.n_sparse)
    data_out = lax.squeeze(arr.data, batch_dims + dense_dims)
    indices_out = lax.squeeze(arr.indices[..., sparse_dims], batch_dims)
    out_shape = tuple(s for i, s in enumerate(arr.shape) if i not in dimensions)
    return BCOO(
        (data_out, indices_out),
        shape=out_shape,
        indices_sorted=arr.indices_sorted,
        unique_indices=arr.unique_indices,
    )


def bcoo_rev(operand: BCOO, dimensions: Sequence[int]) -> BCOO:
    """`lax.rev` of a BCOO array: `dimensions` reversed."""
    abstract_eval_rules[lax.rev_p](
        ShapedArray(operand.shape, operand.dtype), dimensions=tuple(dimensions)
    )
    n_batch, n_sparse = operand.n_batch, operand.n_sparse
    batch_dims = [d for d in dimensions if d < n_batch]
    sparse_dims = [d for d in dimensions if n_batch <= d < n_batch + n_sparse]
    dense_dims = [d for d in dimensions if d >= n_batch + n_sparse]
    data, indices = operand.data, operand.indices
    if batch_dims:
        indices = lax.rev(indices, dimensions=batch_dims)
    if batch_dims or dense_dims:
        data = lax.rev(data, dimensions=batch_dims + [d + 1 - n_sparse for d in dense_dims])
    if sparse_dims:
        sparse_shape = jnp.array(operand.shape[n_batch : n_batch + n_sparse], dtype=indices.dtype)
        spdims = jnp.array([d - n_batch for d in sparse_dims])
        indices = jnp.at(indices)[..., spdims].mul(-1)
        indices = jnp.at(indices)[..., spdims].add(sparse_shape[spdims] - 1)
        indices = jnp.where(indices < 0, sparse_shape, indices)
    return BCOO((data, indices), shape=operand.shape)


def bcoo_slice(
    mat: BCOO,
    *,
    start_indices: Sequence[int],
    limit_indices: Sequence[int],
    strides: Sequence[int] | None = None,
) -> BCOO:
    """`lax.slice` of a BCOO array."""
    if not isinstance(mat, BCOO):
        raise TypeError(f"bcoo_slice: input should be BCOO array, got type(mat)={type(mat)}")
    starts = [operator.index(i) for i in start_indices]
    limits = [operator.index(i) for i in limit_indices]
    steps = [operator.index(i) for i in strides] if strides is not None else [1] * mat.ndim
    if len(starts) != len(limits) != len(steps) != mat.ndim:
        raise ValueError(f"bcoo_slice: indices must have size mat.ndim={mat.ndim}")
    if len(steps) != mat.ndim:
        raise ValueError(f"len(strides) = {len(steps)}; expected {mat.ndim}")
    if any(s <= 0 for s in steps):
        raise ValueError(f"strides must be a sequence of positive integers; got {steps}")
    if not all(
        0 <= start <= end <= size
        for start, end, size in zip(starts, limits, mat.shape, strict=True)
    ):
        raise ValueError(
            f"bcoo_slice: invalid indices. Got start_indices={starts}, "
            f"limit_indices={limits} and shape={mat.shape}"
        )
    nb, ns = mat.n_batch, mat.n_sparse
    data_slices: list[slice] = []
    index_slices: list[slice] = []
    for i in range(nb):
        whole = slice(starts[i], limits[i], steps[i])
        data_slices.append(slice(None) if mat.data.shape[i] != mat.shape[i] else whole)
        index_slices.append(slice(None) if mat.indices.shape[i] != mat.shape[i] else whole)
    data_slices.append(slice(None))
    index_slices.extend([slice(None), slice(None)])
    data_slices.extend(slice(starts[i], limits[i], steps[i]) for i in range(nb + ns, mat.ndim))
    new_data = mat.data[tuple(data_slices)]
    new_indices = mat.indices[tuple(index_slices)]
    new_shape = tuple(
        (end - start + step - 1) // step
        for start, end, step in zip(starts, limits, steps, strict=True)
    )
    if ns:
        lead = tuple(range(nb + 1))
        dt = new_indices.dtype
        s0 = jnp.expand_dims(jnp.array(starts[nb : nb + ns], dtype=dt), lead)
        s1 = jnp.expand_dims(jnp.array(limits[nb : nb + ns], dtype=dt), lead)
        st = jnp.expand_dims(jnp.array(steps[nb : nb + ns], dtype=dt), lead)
        keep = jnp.all(
            (new_indices >= s0) & (new_indices < s1) & ((new_indices - s0) % st == 0),
            axis=-1,
            keepdims=True,
        )
        new_indices = jnp.where(keep, (new_indices - s0 + st - 1) // st, (s1 - s0 + st - 1) // st)
        keep_data = lax.expand_dims(keep[..., 0], tuple(range(nb + 1, nb + 1 + mat.n_dense)))
        new_data = jnp.where(keep_data, new_data, 0)
        new_nse = math.prod(new_shape[nb : nb + ns])
        if mat.nse > new_nse:
            new_data, new_indices = bcoo_sum_duplicates_buffers(
                new_data, new_indices, spinfo=SparseInfo(shape=new_shape), nse=new_nse
            )
    return BCOO((new_data, new_indices), shape=new_shape)


def bcoo_reshape(
    mat: BCOO,
    *,
    new_sizes: Sequence[int],
    dimensions: Sequence[int] | None = None,
    sharding: Any = None,
) -> BCOO:
    """`lax.reshape` of a BCOO array (batch, sparse and dense dimensions must not mix)."""
    new_sizes = tuple(new_sizes)
    nb, ns = mat.n_batch, mat.n_sparse
    if mat.indices.shape[:nb] != mat.data.shape[:nb] != mat.shape[:nb]:
        raise NotImplementedError("reshape of arrays with broadcasted batch dimensions.")
    batch_shape, sparse_shape = mat.shape[:nb], mat.shape[nb : nb + ns]
    batch_perm, sparse_perm, dense_perm = validate_permutation(
        mat.data, mat.indices, dimensions or tuple(range(mat.ndim)), mat.shape
    )
    batch_size, sparse_size = math.prod(batch_shape), math.prod(sparse_shape)
    cuml_shape = np.cumprod(new_sizes)
    if batch_size != 1 and batch_size not in cuml_shape:
        raise ValueError(
            "bcoo_reshape: new shape cannot mix batch and sparse dimensions; "
            f"got shape={mat.shape} new_shape={new_sizes} with n_batch={nb}"
        )
    if sparse_size != 1 and batch_size * sparse_size not in cuml_shape:
        raise ValueError(
            "bcoo_reshape: new shape cannot mix sparse and dense dimensions; "
            f"got shape={mat.shape} new_shape={new_sizes} with n_dense={mat.n_dense}"
        )
    i1 = int(cuml_shape.searchsorted(batch_size, side="right"))
    i2 = int(cuml_shape.searchsorted(batch_size * sparse_size, side="right"))
    new_batch, new_sparse, new_dense = new_sizes[:i1], new_sizes[i1:i2], new_sizes[i2:]
    data = lax.reshape(
        mat.data,
        (*new_batch, mat.nse, *new_dense),
        (*batch_perm, nb, *(p + nb + 1 for p in dense_perm)),
    )
    indices = lax.reshape(mat.indices, (*new_batch, mat.nse, ns), (*batch_perm, nb, nb + 1))
    if not new_sparse:
        indices = jnp.zeros_like(indices, shape=(*new_batch, mat.nse, 0))
    elif sparse_shape:
        cols = tuple(indices[..., i] for i in sparse_perm)
        dims = tuple(int(mat.shape[nb + i]) for i in sparse_perm)
        flat = jnp.ravel_multi_index(cols, dims=dims, mode="clip")
        bounds = jnp.array(mat.shape[nb : nb + ns], dtype=indices.dtype)
        oob = (indices >= bounds).any(-1, keepdims=True)
        new_cols = jnp.unravel_index(flat, new_sparse)
        indices = jnp.concatenate([c[..., None] for c in new_cols], axis=-1)
        indices = jnp.where(oob, jnp.array(new_sparse, dtype=indices.dtype), indices)
    return BCOO((data, indices), shape=new_sizes)


def bcoo_concatenate(operands: Sequence[BCOO], *, dimension: int) -> BCOO:
    """`lax.concatenate` of BCOO arrays along a batch or sparse `dimension`."""
    dimension = operator.index(dimension)
    if not all(isinstance(op, BCOO) for op in operands):
        raise ValueError(
            f"bcoo_concatenate: expected operands to be a sequence of BCOO arrays. Got {operands}"
        )
    out_aval: Any = abstract_eval_rules[lax.concatenate_p](
        *(ShapedArray(op.shape, op.dtype) for op in operands), dimension=dimension
    )
    if len({op.n_dense for op in operands}) > 1:
        raise ValueError("bcoo_concatenate requires inputs to have matching nse dimensions.")
    n_batches = {op.n_batch for op in operands}
    # The common case of `op[None]` adding one batch dimension: align the layouts.
    if len(n_batches) != 1 and max(n_batches) == 1:
        if all(op.shape[0] == 1 for op in operands if op.n_batch == 0):
            operands = [
                bcoo_update_layout(op, n_batch=1) if op.n_batch == 0 else op for op in operands
            ]
        elif all(op.shape[0] == 1 for op in operands if op.n_batch == 1):
            operands = [
                bcoo_update_layout(op, n_batch=0) if op.n_batch == 1 else op for op in operands
            ]
    if len({op.n_batch for op in operands}) != 1:
        raise ValueError("bcoo_concatenate requires inputs to have matching batch dimensions.")
    n_batch, n_sparse = operands[0].n_batch, operands[0].n_sparse
    index_batches = [tuple(op.indices.shape[:n_batch]) for op in operands]
    data_batches = [tuple(op.data.shape[:n_batch]) for op in operands]
    if dimension < n_batch:
        index_batches = [b[:dimension] + b[dimension + 1 :] for b in index_batches]
        data_batches = [b[:dimension] + b[dimension + 1 :] for b in data_batches]
    if not len(set(index_batches)) == len(set(data_batches)) == 1:
        raise NotImplementedError("concatenation of arrays with broadcasted batch indices")
    if dimension < n_batch:
        nses = {op.nse for op in operands}
        if len(nses) != 1:
            operands = [bcoo_set_nse(op, max(nses)) for op in operands]
        new_indices = lax.concatenate([op.indices for op in operands], dimension=dimension)
        new_data = lax.concatenate([op.data for op in operands], dimension=dimension)
    elif dimension < n_batch + n_sparse:
        offsets = np.cumsum(
            [0] + [op.shape[dimension] for op in operands[:-1]], dtype=operands[0].indices.dtype
        )
        new_data = lax.concatenate([op.data for op in operands], dimension=n_batch)
        new_indices = lax.concatenate(
            [
                jnp.at(op.indices)[..., dimension - n_batch].add(offset)
                for op, offset in zip(operands, offsets, strict=True)
            ],
            dimension=n_batch,
        )
    else:
        raise NotImplementedError("Concatenation along dense dimensions.")
    return BCOO((new_data, new_indices), shape=out_aval.shape)


def bcoo_dynamic_slice(mat: BCOO, start_indices: Sequence[Any], slice_sizes: Sequence[int]) -> BCOO:
    """`lax.dynamic_slice` of a BCOO array (starts may be traced; sizes are static)."""
    slice_sizes = tuple(operator.index(i) for i in slice_sizes)
    abstract_eval_rules[lax.dynamic_slice_p](
        ShapedArray(mat.shape, mat.dtype),
        *(ShapedArray((), jnp.asarray(i).dtype) for i in start_indices),
        slice_sizes=slice_sizes,
    )
    if not isinstance(mat, BCOO):
        raise TypeError(f"bcoo_slice: input should be BCOO array, got type(mat)={type(mat)}")
    starts = tuple(jnp.asarray(i) for i in start_indices)
    assert all(jnp.issubdtype(jnp.result_type(i), np.integer) for i in starts)
    assert all(np.shape(i) == () for i in starts)
    if len(starts) != len(slice_sizes) != mat.ndim:
        raise ValueError(f"bcoo_dynamic_slice: indices must have size mat.ndim={mat.ndim}")
    if not all(0 <= size <= axis for size, axis in zip(slice_sizes, mat.shape, strict=True)):
        raise TypeError(
            "slice_sizes must be less than or equal to operand shape, "
            f"got slice_sizes {slice_sizes} for operand shape {mat.shape}"
        )
    nb, ns = mat.n_batch, mat.n_sparse
    zero = np.array(0, dtype=jnp.result_type(starts[0]) if starts else np.int32)
    data_start: list[Any] = []
    data_sizes: list[int] = []
    indices_start: list[Any] = []
    indices_sizes: list[int] = []
    for i in range(nb):
        data_bcast = mat.data.shape[i] != mat.shape[i]
        indices_bcast = mat.indices.shape[i] != mat.shape[i]
        data_start.append(zero if data_bcast else starts[i])
        data_sizes.append(1 if data_bcast else slice_sizes[i])
        indices_start.append(zero if indices_bcast else starts[i])
        indices_sizes.append(1 if indices_bcast else slice_sizes[i])
    data_start.append(zero)
    data_sizes.append(mat.nse)
    indices_start.extend([zero, zero])
    indices_sizes.extend([mat.nse, ns])
    data_start.extend(starts[nb + ns :])
    data_sizes.extend(slice_sizes[nb + ns :])
    new_data = lax.dynamic_slice(mat.data, data_start, data_sizes)
    new_indices = lax.dynamic_slice(mat.indices, indices_start, indices_sizes)
    if ns:
        dt = new_indices.dtype
        lo = jnp.array(starts[nb : nb + ns], dtype=dt)
        sizes = jnp.array(slice_sizes[nb : nb + ns], dtype=dt)
        sparse_shape = jnp.array(mat.shape[nb : nb + ns], dtype=dt)
        lo = jnp.where(lo < 0, lo + sparse_shape, lo)
        lo = jnp.clip(lo, 0, sparse_shape - sizes)
        lead = tuple(range(nb + 1))
        lo, sizes = jnp.expand_dims(lo, lead), jnp.expand_dims(sizes, lead)
        keep = jnp.all((new_indices >= lo) & (new_indices < lo + sizes), -1, keepdims=True)
        new_indices = jnp.where(keep, new_indices - lo, sizes)
        keep_data = lax.expand_dims(keep[..., 0], tuple(range(nb + 1, nb + 1 + mat.n_dense)))
        new_data = jnp.where(keep_data, new_data, 0)
        new_nse = math.prod(slice_sizes[nb : nb + ns])
        if mat.nse > new_nse:
            new_data, new_indices = bcoo_sum_duplicates_buffers(
                new_data, new_indices, spinfo=SparseInfo(shape=slice_sizes), nse=new_nse
            )
    return BCOO((new_data, new_indices), shape=slice_sizes)


__all__ = [
    "bcoo_concatenate",
    "bcoo_dynamic_slice",
    "bcoo_reshape",
    "bcoo_rev",
    "bcoo_slice",
    "bcoo_squeeze",
]
