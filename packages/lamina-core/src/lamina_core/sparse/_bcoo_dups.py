"""`bcoo_sort_indices` and `bcoo_sum_duplicates`: BCOO buffers with their indices sorted,
and with duplicate indices summed into one stored element, each with its rules. Lowering is
registered by the umbrella package."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

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
from lamina_core.ir import ShapedArray
from lamina_core.sparse._bcoo_layout import (
    adjust_indices_nse,
    batch_dims_to_front,
    unique_indices,
    validate_bcoo,
)
from lamina_core.sparse._util import SparseInfo, compiled_impl, nfold_vmap
from lamina_core.trace import ConcretizationTypeError, UserPrimitive, concrete_or_error

Array = Any

_NSE_ERROR = (
    "bcoo_sum_duplicates: nse must be specified when using the function within "
    "jit, vmap, and other transformations requiring abstract evaluation."
)


def _batched_shape(indices: Any, data: Any, n_batch: int) -> tuple[int, ...]:
    return tuple(
        max(int(i), int(d))
        for i, d in zip(indices.shape[:n_batch], data.shape[:n_batch], strict=True)
    )


# --- bcoo_sort_indices --------------------------------------------------------------------

bcoo_sort_indices_p = UserPrimitive("bcoo_sort_indices")
bcoo_sort_indices_p.multiple_results = True


def bcoo_sort_indices_buffers(
    data: Array, indices: Array, *, spinfo: SparseInfo
) -> tuple[Array, Array]:
    """The buffers with the indices of each batch element sorted (duplicates kept)."""
    out = bcoo_sort_indices_p.bind(data, indices, spinfo=spinfo)
    return out[0], out[1]


def _sort_unbatched(indices: Array) -> tuple[Array, Array]:
    nse, n = indices.shape
    cols = [indices[:, i] for i in range(n)]
    *sorted_cols, perm = lax.sort((*cols, lax.iota(indices.dtype, nse)), num_keys=n)
    return jnp.column_stack(sorted_cols), perm


def _permute(d: Array, p: Array) -> Array:
    return d[p]


@bcoo_sort_indices_p.def_impl
def bcoo_sort_indices_impl(
    data: Array, indices: Array, *, spinfo: SparseInfo
) -> tuple[Array, Array]:
    props = validate_bcoo(data, indices, spinfo.shape)
    if props.n_sparse == 0:
        return data, indices
    indices, perm = nfold_vmap(_sort_unbatched, props.n_batch, broadcasted=False)(indices)
    data = nfold_vmap(_permute, props.n_batch)(data, perm)
    return data, indices


@bcoo_sort_indices_p.def_abstract_eval
def _bcoo_sort_indices_abstract_eval(data: Any, indices: Any, *, spinfo: SparseInfo) -> Any:
    props = validate_bcoo(data, indices, spinfo.shape)
    if props.n_sparse == 0:
        return data, indices
    data_out = ShapedArray(
        (
            *_batched_shape(indices, data, props.n_batch),
            props.nse,
            *data.shape[props.n_batch + 1 :],
        ),
        data.dtype,
        weak_type=data.weak_type,
    )
    return data_out, indices


def _bcoo_sort_indices_batch(
    axis_data: AxisData, args: Sequence[Any], dims: Sequence[BatchDim], *, spinfo: SparseInfo
) -> tuple[Any, Any]:
    data, indices, spinfo = batch_dims_to_front(args, dims, spinfo)
    data_out, indices_out = bcoo_sort_indices_buffers(data, indices, spinfo=spinfo)
    if dims[1] is None:
        return [data_out, indices_out[0]], [0, None]
    return [data_out, indices_out], [0, 0]


def _bcoo_sort_indices_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, spinfo: SparseInfo
) -> tuple[Any, Any]:
    data, indices = primals
    props = validate_bcoo(data, indices, spinfo.shape)
    if props.n_sparse == 0:
        return primals, tangents
    data_dot, _ = tangents
    indices_out, perm = nfold_vmap(_sort_unbatched, props.n_batch)(indices)
    permute = nfold_vmap(_permute, props.n_batch)
    data_out = permute(data, perm)
    data_dot_out = zero_of(data_out) if type(data_dot) is Zero else permute(data_dot, perm)
    return (data_out, indices_out), (data_dot_out, zero_of(indices))


jvp_rules.set(bcoo_sort_indices_p, _bcoo_sort_indices_jvp)
batching_rules.set(bcoo_sort_indices_p, _bcoo_sort_indices_batch)


# --- bcoo_sum_duplicates ------------------------------------------------------------------

bcoo_sum_duplicates_p = UserPrimitive("bcoo_sum_duplicates")
bcoo_sum_duplicates_p.multiple_results = True


def bcoo_sum_duplicates_buffers(
    data: Array, indices: Array, *, spinfo: SparseInfo, nse: int | None
) -> tuple[Array, Array]:
    """The buffers with sorted, distinct indices, the values of duplicates summed."""
    if nse is not None:
        nse = operator.index(concrete_or_error(nse, "nse argument of bcoo_sum_duplicates."))
    out = bcoo_sum_duplicates_p.bind(data, indices, spinfo=spinfo, nse=nse)
    return out[0], out[1]


def _scatter_add(d_out: Array, m: Array, d: Array) -> Array:
    return jnp.at(d_out)[m].add(d, mode="drop")


@bcoo_sum_duplicates_p.def_impl
def bcoo_sum_duplicates_impl(
    data: Array, indices: Array, *, spinfo: SparseInfo, nse: int | None
) -> tuple[Array, Array]:
    props = validate_bcoo(data, indices, spinfo.shape)
    indices_out, mapping, nse_batched = unique_indices(
        indices, shape=spinfo.shape, return_inverse=True, return_true_size=True
    )
    if nse is None:
        nse = 1 if props.n_sparse == 0 else int(nse_batched.max())
    indices_out = adjust_indices_nse(indices_out, nse=nse, shape=spinfo.shape)
    if props.n_sparse == 0:
        data = data.sum(props.n_batch, keepdims=True, dtype=data.dtype)
    data_out = jnp.zeros(
        (*_batched_shape(indices, data, props.n_batch), nse, *data.shape[props.n_batch + 1 :]),
        dtype=data.dtype,
    )
    data_out = nfold_vmap(_scatter_add, props.n_batch)(data_out, mapping, data)
    return data_out, indices_out


@bcoo_sum_duplicates_p.def_abstract_eval
def _bcoo_sum_duplicates_abstract_eval(
    data: Any, indices: Any, *, spinfo: SparseInfo, nse: int | None
) -> tuple[ShapedArray, ShapedArray]:
    if nse is None:
        raise ValueError(_NSE_ERROR)
    props = validate_bcoo(data, indices, spinfo.shape)
    indices_out = ShapedArray(
        (*indices.shape[: props.n_batch], nse, props.n_sparse),
        indices.dtype,
        weak_type=indices.weak_type,
    )
    data_out = ShapedArray(
        (*_batched_shape(indices, data, props.n_batch), nse, *data.shape[props.n_batch + 1 :]),
        data.dtype,
        weak_type=data.weak_type,
    )
    return data_out, indices_out


def _bcoo_sum_duplicates_batch(
    axis_data: AxisData,
    args: Sequence[Any],
    dims: Sequence[BatchDim],
    *,
    spinfo: SparseInfo,
    nse: int | None,
) -> tuple[Any, Any]:
    data, indices, new_spinfo = batch_dims_to_front(args, dims, spinfo)
    data_out, indices_out = bcoo_sum_duplicates_buffers(data, indices, spinfo=new_spinfo, nse=nse)
    if dims[1] is None:
        return [data_out, lax.squeeze(indices_out, [0])], [0, None]
    return [data_out, indices_out], [0, 0]


def _bcoo_sum_duplicates_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, spinfo: SparseInfo, nse: int | None
) -> tuple[Any, Any]:
    data, indices = primals
    props = validate_bcoo(data, indices, spinfo.shape)
    data_dot, _ = tangents
    indices_out, mapping, nse_batched = unique_indices(
        indices, shape=spinfo.shape, return_inverse=True, return_true_size=True
    )
    nse_value: Any = jnp.sum(nse_batched) if nse is None else nse
    try:
        nse_int = operator.index(
            concrete_or_error(nse_value, "nse argument of bcoo_sum_duplicates.")
        )
    except ConcretizationTypeError:
        raise ValueError(_NSE_ERROR) from None
    indices_out = adjust_indices_nse(indices_out, nse=nse_int, shape=spinfo.shape)
    if props.n_sparse == 0:
        data = data.sum(props.n_batch, keepdims=True, dtype=data.dtype)
        if type(data_dot) is not Zero:
            data_dot = data_dot.sum(props.n_batch, keepdims=True, dtype=data_dot.dtype)
    data_out = jnp.zeros(
        (*_batched_shape(indices, data, props.n_batch), nse_int, *data.shape[props.n_batch + 1 :]),
        dtype=data.dtype,
    )
    data_dot_out = data_out
    # Scatter-add into a zero-size array is ill-defined (JAX issue 13656): skip it.
    if data_out.size:
        permute = nfold_vmap(_scatter_add, props.n_batch)
    else:
        permute = nfold_vmap(lambda x, i, y: x, props.n_batch)
    data_out = permute(data_out, mapping, data)
    if type(data_dot) is Zero:
        return (data_out, indices_out), (zero_of(data_out), zero_of(indices_out))
    return (data_out, indices_out), (permute(data_dot_out, mapping, data_dot), zero_of(indices_out))


jvp_rules.set(bcoo_sum_duplicates_p, _bcoo_sum_duplicates_jvp)
batching_rules.set(bcoo_sum_duplicates_p, _bcoo_sum_duplicates_batch)

# Eagerly, each primitive runs as one compiled program of its impl.
bcoo_sort_indices_p.def_impl(compiled_impl(bcoo_sort_indices_impl, ("spinfo",)))
