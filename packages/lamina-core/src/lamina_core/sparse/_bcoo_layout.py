"""The BCOO layout: `data` (`batch + (nse,) + dense` shape) and `indices` (`batch + (nse,
n_sparse)`), batch dimensions of size 1 broadcasting. Its checks (`validate_bcoo`), the vmapped
axis moved into the batch dimensions, and index deduplication (`unique_indices`), shared by
every BCOO primitive. Knows no primitive and no `BCOO` object."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any, NamedTuple

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.interpreters import BatchDim
from lamina_core.sparse._util import SparseInfo, nfold_vmap

Array = Any


class BCOOProperties(NamedTuple):
    n_batch: int
    n_sparse: int
    n_dense: int
    nse: int


def validate_bcoo_indices(indices: Any, shape: Sequence[int]) -> BCOOProperties:
    """The layout `indices` implies for an array of `shape`; JAX's errors if they disagree."""
    assert jnp.issubdtype(indices.dtype, jnp.integer)
    shape = tuple(shape)
    nse, n_sparse = indices.shape[-2:]
    n_batch = len(indices.shape) - 2
    n_dense = len(shape) - n_batch - n_sparse
    assert n_dense >= 0
    if len(indices.shape[:n_batch]) != len(shape[:n_batch]) or any(
        s1 not in (1, s2) for s1, s2 in zip(indices.shape[:n_batch], shape[:n_batch], strict=True)
    ):
        raise ValueError(
            f"indices batch dimensions not compatible for indices.shape={indices.shape}, "
            f"shape={shape}"
        )
    if tuple(indices.shape[n_batch:]) != (nse, n_sparse):
        raise ValueError(
            f"Invalid =indices.shape={indices.shape} for nse={nse}, n_batch={n_batch}, "
            f"n_dense={n_dense}"
        )
    return BCOOProperties(n_batch=n_batch, n_sparse=n_sparse, n_dense=n_dense, nse=nse)


def validate_bcoo(data: Any, indices: Any, shape: Sequence[int]) -> BCOOProperties:
    """The layout of (`data`, `indices`) for an array of `shape`; JAX's errors if invalid."""
    props = validate_bcoo_indices(indices, shape)
    n_batch, n_sparse, n_dense, nse = props
    shape = tuple(shape)
    if any(s1 not in (1, s2) for s1, s2 in zip(data.shape[:n_batch], shape[:n_batch], strict=True)):
        raise ValueError(
            f"data batch dimensions not compatible for data.shape={data.shape}, shape={shape}"
        )
    if tuple(data.shape[n_batch:]) != (nse, *shape[n_batch + n_sparse :]):
        raise ValueError(
            f"Invalid data.shape={data.shape} for nse={nse}, n_batch={n_batch}, n_dense={n_dense}"
        )
    return props


def batch_dims_to_front(
    batched_args: Sequence[Any],
    batch_dims: Sequence[BatchDim],
    spinfo: SparseInfo,
    batch_size: int | None = None,
) -> tuple[Array, Array, SparseInfo]:
    """(data, indices) with the vmapped axis moved (or added) in front as a new batch axis."""
    data, indices = batched_args
    n_batch = indices.ndim - 2 + bool(batch_dims[1] is None)
    if not all(b is None or 0 <= b < n_batch for b in batch_dims):
        raise NotImplementedError(
            "batch_dims must be None or satisfy 0 < dim < n_batch. "
            f"Got batch_dims={tuple(batch_dims)} for n_batch={n_batch}."
        )
    data, indices = (
        lax.expand_dims(arg, [0]) if bdim is None else jnp.moveaxis(arg, bdim, 0)
        for arg, bdim in zip(batched_args, batch_dims, strict=True)
    )
    if batch_size is None:
        batch_size = max(
            arg.shape[d] for arg, d in zip(batched_args, batch_dims, strict=True) if d is not None
        )
    return (
        data,
        indices,
        SparseInfo(
            (batch_size, *spinfo.shape),
            indices_sorted=spinfo.indices_sorted,
            unique_indices=spinfo.unique_indices,
        ),
    )


def tuple_replace(tup: tuple[Any, ...], ind: int, val: Any) -> tuple[Any, ...]:
    return (*tup[:ind], val, *tup[ind + 1 :])


def adjust_indices_nse(indices: Array, *, nse: int, shape: Sequence[int]) -> Array:
    """`indices` cut, or padded with out-of-bounds indices, to `nse` stored elements."""
    props = validate_bcoo_indices(indices, shape)
    if nse <= props.nse:
        return indices[..., :nse, :]
    fill = lax.broadcast_in_dim(
        jnp.array(shape[props.n_batch : props.n_batch + props.n_sparse], dtype=indices.dtype),
        (*indices.shape[:-2], nse - props.nse, indices.shape[-1]),
        (indices.ndim - 1,),
    )
    return lax.concatenate([indices, fill], dimension=indices.ndim - 2)


def unique_indices(
    indices: Array,
    *,
    shape: Sequence[int],
    return_inverse: bool = False,
    return_index: bool = False,
    return_true_size: bool = False,
) -> Any:
    """The distinct indices of each batch element (sorted, padded out of bounds to nse), and
    optionally where each first occurs, where each input one went, and how many there are."""
    props = validate_bcoo_indices(indices, shape)
    f = partial(
        _unique_indices_unbatched,
        shape=tuple(shape[props.n_batch :]),
        return_inverse=return_inverse,
        return_index=return_index,
        return_true_size=return_true_size,
    )
    return nfold_vmap(f, props.n_batch, broadcasted=False)(indices)


def _unique_indices_unbatched(
    indices: Array,
    *,
    shape: tuple[int, ...],
    return_inverse: bool,
    return_index: bool,
    return_true_size: bool,
) -> Any:
    props = validate_bcoo_indices(indices, shape)
    out: tuple[Any, ...]
    if props.n_sparse == 0:
        out = (jnp.zeros_like(indices, shape=(1, 0)),)
        if return_index:
            out = (*out, jnp.zeros(1, dtype="int32"))
        if return_inverse:
            out = (*out, jnp.zeros(1, dtype="int32"))
        if return_true_size:
            out = (*out, 1)
        return out[0] if len(out) == 1 else out
    fill_value = jnp.expand_dims(jnp.array(shape[: props.n_sparse], dtype=indices.dtype), (0,))
    out_of_bounds = (indices >= fill_value).any(-1, keepdims=True)
    indices = jnp.where(out_of_bounds, fill_value, indices)
    found = jnp.unique(
        indices,
        axis=0,
        return_inverse=return_inverse,
        return_index=return_index,
        return_counts=return_true_size,
        size=props.nse,
        fill_value=fill_value,
    )
    out = tuple(found) if isinstance(found, tuple) else (found,)
    if return_inverse:
        idx = 2 if return_index else 1
        out = (*out[:idx], out[idx].ravel(), *out[idx + 1 :])
    if return_true_size:
        # The number of distinct indices: runs of nonzero length (padding counts 0).
        nse = (out[-1] > 0).sum()
        nse = nse - (indices == fill_value).any().astype(nse.dtype)
        out = (*out[:-1], nse)
    return out


__all__ = [
    "BCOOProperties",
    "adjust_indices_nse",
    "batch_dims_to_front",
    "tuple_replace",
    "unique_indices",
    "validate_bcoo",
    "validate_bcoo_indices",
]
