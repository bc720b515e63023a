"""`bcoo_spdot_general`: `dot_general` of two BCOO arrays (sparse x sparse, contracting
sparse dimensions), giving the BCOO buffers of the product, with its rules. Lowering is
registered by the umbrella package."""

from __future__ import annotations

import math
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
    jvp_rules,
    zero_of,
)
from lamina_core.ir import ShapedArray, abstract_eval_rules
from lamina_core.sparse._bcoo_dot import (
    dot_general_batch_dim_nums,
    ensure_index_tuple,
    remaining,
)
from lamina_core.sparse._bcoo_dups import bcoo_sum_duplicates_buffers
from lamina_core.sparse._bcoo_layout import batch_dims_to_front, validate_bcoo
from lamina_core.sparse._util import SparseInfo, compiled_impl, nfold_vmap
from lamina_core.trace import UserPrimitive

Array = Any

bcoo_spdot_general_p = UserPrimitive("bcoo_spdot_general")
bcoo_spdot_general_p.multiple_results = True


def bcoo_spdot_general_buffers(
    lhs_data: Array,
    lhs_indices: Array,
    rhs_data: Array,
    rhs_indices: Array,
    *,
    lhs_spinfo: SparseInfo,
    rhs_spinfo: SparseInfo,
    dimension_numbers: Any,
    preferred_element_type: Any,
) -> tuple[Array, Array]:
    """The BCOO buffers of `dot_general` of two BCOO arrays (given by their buffers)."""
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    cdims = (ensure_index_tuple(lhs_contract), ensure_index_tuple(rhs_contract))
    bdims = (ensure_index_tuple(lhs_batch), ensure_index_tuple(rhs_batch))
    out = bcoo_spdot_general_p.bind(
        lhs_data,
        lhs_indices,
        rhs_data,
        rhs_indices,
        lhs_spinfo=lhs_spinfo,
        rhs_spinfo=rhs_spinfo,
        dimension_numbers=(cdims, bdims),
        preferred_element_type=preferred_element_type,
    )
    return out[0], out[1]


def _spdot_unbatched(
    lhs_data: Array,
    lhs_indices: Array,
    rhs_data: Array,
    rhs_indices: Array,
    *,
    lhs_spinfo: SparseInfo,
    rhs_spinfo: SparseInfo,
    lhs_contracting: Sequence[int],
    rhs_contracting: Sequence[int],
    out_nse: int,
) -> tuple[Array, Array]:
    lhs_shape, rhs_shape = lhs_spinfo.shape, rhs_spinfo.shape
    lhs = validate_bcoo(lhs_data, lhs_indices, lhs_shape)
    rhs = validate_bcoo(rhs_data, rhs_indices, rhs_shape)
    assert lhs.n_batch == rhs.n_batch == 0
    assert lhs.n_dense == rhs.n_dense == 0
    out_shape = (
        *(s for i, s in enumerate(lhs_shape) if i not in lhs_contracting),
        *(s for i, s in enumerate(rhs_shape) if i not in rhs_contracting),
    )
    lhs_i = lhs_indices[:, jnp.array(lhs_contracting, dtype=int)]
    rhs_i = rhs_indices[:, jnp.array(rhs_contracting, dtype=int)]
    lhs_j = lhs_indices[:, jnp.array(remaining(range(lhs.n_sparse), lhs_contracting), dtype=int)]
    rhs_j = rhs_indices[:, jnp.array(remaining(range(rhs.n_sparse), rhs_contracting), dtype=int)]
    overlap = (lhs_i[:, None] == rhs_i[None, :]).all(-1)
    lhs_fill = jnp.expand_dims(
        jnp.array([lhs_shape[d] for d in lhs_contracting], dtype=lhs_i.dtype),
        tuple(range(lhs_i.ndim - 1)),
    )
    rhs_fill = jnp.expand_dims(
        jnp.array([rhs_shape[d] for d in rhs_contracting], dtype=rhs_i.dtype),
        tuple(range(rhs_i.ndim - 1)),
    )
    lhs_valid = (lhs_i < lhs_fill).all(-1)
    rhs_valid = (rhs_i < rhs_fill).all(-1)
    out_data = jnp.where(
        overlap & lhs_valid[:, None] & rhs_valid[None, :], lhs_data[:, None] * rhs_data[None, :], 0
    ).ravel()
    n_lhs = lhs_j.shape[-1]
    out_indices = jnp.zeros(
        [lhs.nse, rhs.nse, n_lhs + rhs_j.shape[-1]],
        dtype=jnp.result_type(lhs_indices, rhs_indices),
    )
    out_indices = jnp.at(out_indices)[:, :, :n_lhs].set(lhs_j[:, None])
    out_indices = jnp.at(out_indices)[:, :, n_lhs:].set(rhs_j[None, :])
    out_indices = out_indices.reshape(len(out_data), out_indices.shape[-1])
    return bcoo_sum_duplicates_buffers(
        out_data, out_indices, spinfo=SparseInfo(shape=out_shape), nse=out_nse
    )


def bcoo_spdot_general_impl(
    lhs_data: Array,
    lhs_indices: Array,
    rhs_data: Array,
    rhs_indices: Array,
    *,
    lhs_spinfo: SparseInfo,
    rhs_spinfo: SparseInfo,
    dimension_numbers: Any,
    preferred_element_type: Any,
) -> tuple[Array, Array]:
    lhs_shape, rhs_shape = lhs_spinfo.shape, rhs_spinfo.shape
    lhs = validate_bcoo(lhs_data, lhs_indices, lhs_shape)
    rhs = validate_bcoo(rhs_data, rhs_indices, rhs_shape)
    assert lhs.n_dense == rhs.n_dense == 0
    data_aval, _ = _bcoo_spdot_general_abstract_eval(
        lhs_data.aval,
        lhs_indices.aval,
        rhs_data.aval,
        rhs_indices.aval,
        lhs_spinfo=lhs_spinfo,
        rhs_spinfo=rhs_spinfo,
        dimension_numbers=dimension_numbers,
        preferred_element_type=preferred_element_type,
    )
    (lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch) = dimension_numbers
    lhs_perm = [*lhs_batch, *remaining(range(lhs.n_batch), lhs_batch)]
    rhs_perm = [*rhs_batch, *remaining(range(rhs.n_batch), rhs_batch)]
    lhs_data = lhs_data.transpose([*lhs_perm, *range(lhs.n_batch, lhs_data.ndim)])
    rhs_data = rhs_data.transpose([*rhs_perm, *range(rhs.n_batch, rhs_data.ndim)])
    lhs_indices = lhs_indices.transpose([*lhs_perm, *range(lhs.n_batch, lhs_indices.ndim)])
    rhs_indices = rhs_indices.transpose([*rhs_perm, *range(rhs.n_batch, rhs_indices.ndim)])
    func: Any = partial(
        _spdot_unbatched,
        lhs_spinfo=SparseInfo(lhs_shape[lhs.n_batch :]),
        rhs_spinfo=SparseInfo(rhs_shape[rhs.n_batch :]),
        lhs_contracting=[d - lhs.n_batch for d in lhs_contracting],
        rhs_contracting=[d - rhs.n_batch for d in rhs_contracting],
        out_nse=data_aval.shape[-1],
    )
    func = nfold_vmap(func, rhs.n_batch - len(rhs_batch), in_axes=(None, None, 0, 0))
    func = nfold_vmap(func, lhs.n_batch - len(lhs_batch), in_axes=(0, 0, None, None))
    func = nfold_vmap(func, len(lhs_batch))
    return func(lhs_data, lhs_indices, rhs_data, rhs_indices)  # type: ignore[no-any-return]  # the vmapped pair


@bcoo_spdot_general_p.def_abstract_eval
def _bcoo_spdot_general_abstract_eval(
    lhs_data: Any,
    lhs_indices: Any,
    rhs_data: Any,
    rhs_indices: Any,
    *,
    lhs_spinfo: SparseInfo,
    rhs_spinfo: SparseInfo,
    dimension_numbers: Any,
    preferred_element_type: Any,
) -> tuple[ShapedArray, ShapedArray]:
    lhs_shape, rhs_shape = lhs_spinfo.shape, rhs_spinfo.shape
    out_aval: Any = abstract_eval_rules[lax.dot_general_p](
        ShapedArray(tuple(lhs_shape), lhs_data.dtype),
        ShapedArray(tuple(rhs_shape), rhs_data.dtype),
        dimension_numbers=dimension_numbers,
        precision=None,
        preferred_element_type=preferred_element_type,
        out_sharding=None,
    )
    lhs = validate_bcoo(lhs_data, lhs_indices, lhs_shape)
    rhs = validate_bcoo(rhs_data, rhs_indices, rhs_shape)
    (lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch) = dimension_numbers
    if lhs.n_dense or rhs.n_dense:
        raise NotImplementedError("bcoo_spdot_general with dense dimensions.")
    if (lhs_batch and max(lhs_batch) >= lhs.n_batch) or (
        rhs_batch and max(rhs_batch) >= rhs.n_batch
    ):
        raise NotImplementedError(
            "bcoo_spdot_general: batch_dims must correspond to batch dimensions of the sparse "
            "representation."
        )
    for contracting, props in ((lhs_contracting, lhs), (rhs_contracting, rhs)):
        if contracting and (
            min(contracting) < props.n_batch or max(contracting) >= props.n_batch + props.n_sparse
        ):
            raise NotImplementedError(
                "bcoo_spdot_general only supports contraction of sparse indices."
            )
    if rhs.n_batch > len(rhs_batch) and lhs.n_sparse > len(lhs_contracting):
        raise ValueError(
            "bcoo_spdot_general: cannot have unused batch dims on rhs with unused sparse dims "
            "on lhs."
        )
    out_nse = (lhs.nse if lhs.n_sparse > len(lhs_contracting) else 1) * (
        rhs.nse if rhs.n_sparse > len(rhs_contracting) else 1
    )
    out_n_batch = lhs.n_batch + rhs.n_batch - len(lhs_batch)
    out_nse = min(out_nse, math.prod(out_aval.shape[out_n_batch:]))
    lhs_batch_shape = np.broadcast_shapes(
        tuple(lhs_data.shape[d] for d in range(lhs.n_batch) if d not in lhs_batch),
        tuple(lhs_indices.shape[d] for d in range(lhs.n_batch) if d not in lhs_batch),
    )
    rhs_batch_shape = np.broadcast_shapes(
        tuple(rhs_data.shape[d] for d in range(rhs.n_batch) if d not in rhs_batch),
        tuple(rhs_indices.shape[d] for d in range(rhs.n_batch) if d not in rhs_batch),
    )
    batch = (*(lhs_shape[d] for d in lhs_batch), *lhs_batch_shape, *rhs_batch_shape)
    n_sparse_out = lhs.n_sparse + rhs.n_sparse - 2 * len(lhs_contracting)
    data_aval = ShapedArray((*batch, out_nse), out_aval.dtype)
    indices_aval = ShapedArray((*batch, out_nse, n_sparse_out), lhs_indices.dtype)
    validate_bcoo(data_aval, indices_aval, out_aval.shape)
    return data_aval, indices_aval


def _bcoo_spdot_general_batch(
    axis_data: AxisData,
    args: Sequence[Any],
    dims: Sequence[BatchDim],
    *,
    lhs_spinfo: SparseInfo,
    rhs_spinfo: SparseInfo,
    preferred_element_type: Any,
    dimension_numbers: Any,
) -> tuple[Any, Any]:
    lhs_ndim, rhs_ndim = len(lhs_spinfo.shape), len(rhs_spinfo.shape)
    batch_size = max(a.shape[d] for a, d in zip(args, dims, strict=True) if d is not None)
    lhs_data, lhs_indices, lhs_spinfo = batch_dims_to_front(
        args[:2], dims[:2], lhs_spinfo, batch_size=batch_size
    )
    rhs_data, rhs_indices, rhs_spinfo = batch_dims_to_front(
        args[2:], dims[2:], rhs_spinfo, batch_size=batch_size
    )
    numbers, out_dim = dot_general_batch_dim_nums((lhs_ndim, rhs_ndim), (0, 0), dimension_numbers)
    out = bcoo_spdot_general_buffers(
        lhs_data,
        lhs_indices,
        rhs_data,
        rhs_indices,
        dimension_numbers=numbers,
        lhs_spinfo=lhs_spinfo,
        rhs_spinfo=rhs_spinfo,
        preferred_element_type=preferred_element_type,
    )
    return list(out), [out_dim, out_dim]


def _bcoo_spdot_general_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], **params: Any
) -> tuple[Any, Any]:
    lhs_data, lhs_indices, rhs_data, rhs_indices = primals
    lhs_data_dot, lhs_indices_dot, rhs_data_dot, rhs_indices_dot = tangents
    out = bcoo_spdot_general_buffers(*primals, **params)
    assert type(lhs_indices_dot) is Zero
    assert type(rhs_indices_dot) is Zero
    data_dot: Any = 0
    if type(lhs_data_dot) is not Zero:
        data_dot += bcoo_spdot_general_buffers(
            lhs_data_dot, lhs_indices, rhs_data, rhs_indices, **params
        )[0]
    if type(rhs_data_dot) is not Zero:
        data_dot += bcoo_spdot_general_buffers(
            lhs_data, lhs_indices, rhs_data_dot, rhs_indices, **params
        )[0]
    return out, [data_dot, zero_of(out[1])]


batching_rules.set(bcoo_spdot_general_p, _bcoo_spdot_general_batch)
jvp_rules.set(bcoo_spdot_general_p, _bcoo_spdot_general_jvp)
bcoo_spdot_general_p.def_impl(
    compiled_impl(
        bcoo_spdot_general_impl,
        ("lhs_spinfo", "rhs_spinfo", "dimension_numbers", "preferred_element_type"),
    )
)
