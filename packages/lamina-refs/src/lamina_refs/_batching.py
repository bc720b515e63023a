"""Batching of the Ref primitives (`vmap`), as JAX's.

A batched Ref holds the batched value, its mapped axis at the Ref's batch dimension; an index
of it gets a full slice on that axis, and the mapped axis of what is read or written sits
where NumPy's indexing rule puts that slice. Writing a batched value into an unbatched Ref is
JAX's error (which element would it hold?). A Ref created under `vmap` is batched even from an
unbatched value. Batched index operands take the general route: the whole value is read,
indexed (or updated) by the batched functional rule, and written back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lamina_core.interpreters import AxisData, BatchDim, batching_rules, needs_axis_rule
from lamina_core.lax import bdim_to, broadcast_batched
from lamina_core.trace import typeof
from lamina_core.transforms import vmap
from lamina_refs._indexing import IntIndex, NDIndexer, Slice, Transforms
from lamina_refs._primitives import (
    addupdate_p,
    addupdate_value,
    empty_ref_p,
    free_ref_p,
    freeze_p,
    get_p,
    get_value,
    new_ref_p,
    swap_p,
    swap_value,
)


def _with_batch_axis(tree: Transforms, dim: int, size: int) -> tuple[Transforms, int]:
    """The index of a Ref batched at `dim`, and where the mapped axis lands in what it reads."""
    if not tree:
        return (), dim
    (indexer,) = tree
    assert isinstance(indexer, NDIndexer)  # `_direct` checked
    indices = list(indexer.indices)
    indices.insert(dim, Slice(0, size, 1))
    shape = list(indexer.shape)
    shape.insert(dim, size)
    batched = NDIndexer(tuple(indices), tuple(shape), indexer.int_indexer_shape)
    # Where NumPy's rule puts the new slice: count the slices before it, and the integer
    # indexers' block if it comes first or before it.
    is_int = [isinstance(i, IntIndex) for i in indices]
    slices_before = sum(1 for i in indices[:dim] if isinstance(i, Slice))
    positions = [k for k, b in enumerate(is_int) if b]
    if not positions:
        return (batched,), slices_before
    ndim_int = len(indexer.int_indexer_shape)
    contiguous = positions[-1] - positions[0] + 1 == len(positions)
    if not contiguous or positions[0] < dim:
        return (batched,), slices_before + ndim_int
    return (batched,), slices_before


def _direct(tree: Transforms, idx_dims: Sequence[BatchDim]) -> bool:
    """Whether a batched Ref is read or written in place by its index with a full slice of
    the batch axis added (one indexer, its operands unbatched); otherwise the whole value is
    read, viewed by the batched functional rule, and written back. A chain of views is not
    batched, as in JAX."""
    if len(tree) > 1:
        raise NotImplementedError("Batching with multiple indexers not supported.")
    plain = not tree or isinstance(tree[0], NDIndexer)
    return plain and all(i is None for i in idx_dims)


def _unbatched_ref_error(ref: Any) -> Exception:
    return Exception(
        "performing a set/swap operation with vmapped value on an unbatched array reference of "
        f"type {typeof(ref).str_short(short_dtypes=False)}. Move the array reference to be an "
        "argument to the vmapped function?"
    )


def _new_ref_batched(
    axis: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any
) -> tuple[Any, BatchDim]:
    (x,), (d,) = vals, dims
    if d is None:  # defensively batched, as JAX: a write of a batched value may follow
        x, d = broadcast_batched(x, axis.size, 0), 0
    return new_ref_p.bind(x, **params), d


def _empty_ref_batched(
    axis: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], *, ty: Any, memory_space: Any
) -> tuple[Any, BatchDim]:
    return empty_ref_p.bind(ty=ty.inc_rank(axis.size, 0), memory_space=memory_space), 0


def _free_ref_batched(
    axis: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim]
) -> tuple[list[Any], list[BatchDim]]:
    free_ref_p.bind(vals[0])
    return [], []


def _freeze_batched(
    axis: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim]
) -> tuple[Any, BatchDim]:
    return freeze_p.bind(vals[0]), dims[0]


def _read_whole(ref: Any, d: BatchDim) -> tuple[Any, BatchDim]:
    return get_p.bind(ref, tree=()), d


def _get_batched(
    axis: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], *, tree: Transforms
) -> tuple[Any, BatchDim]:
    ref, *idx = vals
    d, *idx_dims = dims
    if _direct(tree, idx_dims):
        if d is None:  # pragma: no cover  (unbatched: never batched)
            return get_p.bind(ref, *idx, tree=tree), None
        batched, out_dim = _with_batch_axis(tree, d, axis.size)
        return get_p.bind(ref, *idx, tree=batched), out_dim
    whole, wd = _read_whole(ref, d)
    out = vmap(lambda v, *i: get_value(v, i, tree), in_axes=(wd, *idx_dims), axis_size=axis.size)(
        whole, *idx
    )
    return out, 0


def _swap_batched(
    axis: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], *, tree: Transforms
) -> tuple[Any, BatchDim]:
    ref, x, *idx = vals
    d, xd, *idx_dims = dims
    if d is None:
        raise _unbatched_ref_error(ref)
    if _direct(tree, idx_dims):
        batched, out_dim = _with_batch_axis(tree, d, axis.size)
        x = bdim_to(x, xd, out_dim, axis.size)
        return swap_p.bind(ref, x, *idx, tree=batched), out_dim
    whole, wd = _read_whole(ref, d)

    def update(v: Any, val: Any, *i: Any) -> tuple[Any, Any]:
        return swap_value(v, val, i, tree)

    new, old = vmap(update, in_axes=(wd, xd, *idx_dims), out_axes=(wd, 0),
                    axis_size=axis.size)(whole, x, *idx)  # fmt: skip
    swap_p.bind(ref, new, tree=())
    return old, 0


def _addupdate_batched(
    axis: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], *, tree: Transforms
) -> tuple[list[Any], list[BatchDim]]:
    ref, x, *idx = vals
    d, xd, *idx_dims = dims
    if d is None:
        raise _unbatched_ref_error(ref)
    if _direct(tree, idx_dims):
        batched, out_dim = _with_batch_axis(tree, d, axis.size)
        addupdate_p.bind(ref, bdim_to(x, xd, out_dim, axis.size), *idx, tree=batched)
        return [], []
    whole, wd = _read_whole(ref, d)
    new = vmap(lambda v, val, *i: addupdate_value(v, val, i, tree), in_axes=(wd, xd, *idx_dims),
               out_axes=wd, axis_size=axis.size)(whole, x, *idx)  # fmt: skip
    swap_p.bind(ref, new, tree=())
    return [], []


needs_axis_rule.add(new_ref_p)
needs_axis_rule.add(empty_ref_p)
batching_rules.set(empty_ref_p, _empty_ref_batched)
batching_rules.set(free_ref_p, _free_ref_batched)
batching_rules.set(new_ref_p, _new_ref_batched)
batching_rules.set(freeze_p, _freeze_batched)
batching_rules.set(get_p, _get_batched)
batching_rules.set(swap_p, _swap_batched)
batching_rules.set(addupdate_p, _addupdate_batched)
