"""Shape checks for gather and scatter: XLA's shape inference, with JAX's error messages.

Dimension numbers are read by attribute only, so this module does not import the one that
defines them; the checks run in the primitives' abstract evaluation.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from lamina_core.ir import ShapedArray
from lamina_core.lax import _checks as c


def _sorted(dims: Sequence[int], op: str, name: str) -> None:
    if any(b < a for a, b in itertools.pairwise(dims)):
        raise TypeError(f"{name} in {op} op must be sorted; got {dims}")


def _in_range(dims: Sequence[int], rank: int, op: str, name: str) -> None:
    for d in dims:
        if d < 0 or d >= rank:
            raise TypeError(f"Invalid {name} set in {op} op; valid range is [0, {rank}); got: {d}.")


def _sorted_in_range(dims: Sequence[int], rank: int, op: str, name: str) -> None:
    # As in JAX: only the ends are looked at, after the dims were checked to be sorted.
    if dims and (dims[0] < 0 or dims[-1] >= rank):
        bad = dims[0] if dims[0] < 0 else dims[-1]
        raise TypeError(f"Invalid {name} set in {op} op; valid range is [0, {rank}); got: {bad}.")


def _unique(dims: Sequence[int], op: str, name: str) -> None:
    if len(set(dims)) != len(dims):
        raise TypeError(f"{name} in {op} op must not repeat; got: {dims}.")


def _disjoint(a: Sequence[int], b: Sequence[int], op: str, name_a: str, name_b: str) -> None:
    if not set(a).isdisjoint(b):
        raise TypeError(f"{name_a} and {name_b} in {op} op must be disjoint; got: {a} and {b}.")


def _check_indices_dtype(indices: ShapedArray) -> None:
    if c.kind_of(indices.dtype) not in c.INT:
        raise ValueError("indices must have an integer type")


def _check_batching(
    op: str,
    operand: ShapedArray,
    indices: ShapedArray,
    operand_dims: Sequence[int],
    indices_dims: Sequence[int],
    indices_name: str,
) -> None:
    title = op.capitalize()
    _unique(indices_dims, op, indices_name)
    _in_range(indices_dims, indices.ndim, op, indices_name)
    if indices.ndim - 1 in indices_dims:
        raise TypeError(
            f"{title} op cannot have the index vector dimension as a batching dimension; "
            f"got {indices_dims}."
        )
    if len(operand_dims) != len(indices_dims):
        sep = "" if op == "gather" else " "
        raise TypeError(
            f"{title} op requires equal numbers of operand_batching_dims and {indices_name}, "
            f"got {operand_dims} and{sep}{indices_dims}."
        )
    operand_batch = tuple(operand.shape[i] for i in operand_dims)
    indices_batch = tuple(indices.shape[i] for i in indices_dims)
    if operand_batch != indices_batch:
        raise TypeError(
            f"{title} op requires operand batching dimensions and indices batching dimensions "
            f"to have the same shape, got {operand_batch} and {indices_batch}."
        )


def check_gather(
    x: ShapedArray, idx: ShapedArray, dn: Any, slice_sizes: Sequence[int]
) -> tuple[int, ...]:
    """The output shape of a well-formed gather; a `TypeError` (or, for the dtype of the
    indices, a `ValueError`) saying what is wrong otherwise."""
    _check_indices_dtype(idx)
    offset_dims, collapsed = dn.offset_dims, dn.collapsed_slice_dims
    if idx.ndim < 1:
        raise TypeError(
            f"Gather index leaf dimension must be within [0, rank(indices) + 1). rank(indices) "
            f"is {idx.ndim} and gather index leaf dimension is {idx.ndim - 1}."
        )
    _sorted(offset_dims, "gather", "offset_dims")
    _unique(offset_dims, "gather", "offset_dims")
    out_rank = len(offset_dims) + idx.ndim - 1
    for i, d in enumerate(offset_dims):
        if d < 0 or d >= out_rank:
            raise TypeError(
                f"Offset dimension {i} in gather op is out of bounds; got {d}, but should "
                f"have been in [0, {out_rank})"
            )
    if len(dn.start_index_map) != idx.shape[-1]:
        raise TypeError(
            f"Gather op has {len(dn.start_index_map)} elements in start_index_map and the "
            f"bound of dimension index_vector_dim={idx.ndim - 1} of indices is "
            f"{idx.shape[-1]}. These two numbers must be equal."
        )
    for i, d in enumerate(dn.start_index_map):
        if d < 0 or d >= x.ndim:
            raise TypeError(f"Invalid start_index_map; domain is [0, {x.ndim}), got: {i}->{d}.")
    _unique(dn.start_index_map, "gather", "start_index_map")
    _sorted(collapsed, "gather", "collapsed_slice_dims")
    _sorted_in_range(collapsed, x.ndim, "gather", "collapsed_slice_dims")
    _unique(collapsed, "gather", "collapsed_slice_dims")
    batching = dn.operand_batching_dims
    _unique(batching, "gather", "operand_batching_dims")
    _sorted(batching, "gather", "operand_batching_dims")
    _sorted_in_range(batching, x.ndim, "gather", "operand_batching_dims")
    _disjoint(collapsed, batching, "gather", "collapsed_slice_dims", "operand_batching_dims")
    _disjoint(dn.start_index_map, batching, "gather", "start_index_map", "operand_batching_dims")
    _check_batching(
        "gather", x, idx, batching, dn.start_indices_batching_dims, "start_indices_batching_dims"
    )
    if x.ndim != len(slice_sizes):
        raise TypeError(
            f"Gather op must have one slice size for every input dimension; got: "
            f"len(slice_sizes)={len(slice_sizes)}, input_shape.rank={x.ndim}"
        )
    if len(slice_sizes) != len(offset_dims) + len(collapsed) + len(batching):
        raise TypeError(
            f"All components of the offset index in a gather op must either be a offset "
            f"dimension or explicitly collapsed/batching; got len(slice_sizes)="
            f"{len(slice_sizes)}, output_slice_sizes={offset_dims}, collapsed_slice_dims="
            f"{collapsed}, operand_batching_dims={batching}."
        )
    if idx.size:
        for i, (size, bound) in enumerate(zip(slice_sizes, x.shape, strict=True)):
            if not 0 <= size <= bound:
                raise TypeError(
                    f"Slice size at index {i} in gather op is out of range, must be within "
                    f"[0, {bound} + 1), got {size}."
                )
    for i, d in enumerate(collapsed):
        if slice_sizes[d] != 1:
            raise TypeError(
                f"Gather op can only collapse slice dims with bound 1, but bound is "
                f"{slice_sizes[d]} for index {d} at position {i}."
            )
    for i, d in enumerate(batching):
        if slice_sizes[d] > 1:
            raise TypeError(
                f"Gather op can only have operand batching dims with bound 0/1, but bound is "
                f"{slice_sizes[d]} for index {d} at position {i}."
            )
    return gather_shape(idx, dn, slice_sizes)


def gather_shape(indices: ShapedArray, dn: Any, slice_sizes: Sequence[int]) -> tuple[int, ...]:
    """Batch dimensions of the indices, with the kept window dimensions at `offset_dims`."""
    batch = iter(indices.shape[:-1])
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    window = iter(s for i, s in enumerate(slice_sizes) if i not in dropped)
    rank = len(dn.offset_dims) + indices.ndim - 1
    return tuple(next(window) if i in dn.offset_dims else next(batch) for i in range(rank))


def check_scatter(x: ShapedArray, idx: ShapedArray, upd: ShapedArray, dn: Any) -> None:
    """Raise what JAX raises for an ill-formed scatter of `upd` into `x` at `idx`."""
    _check_indices_dtype(idx)
    if x.dtype != upd.dtype:
        # JAX's check_same_dtypes message, without a tip: there is no jnp.scatter.
        raise TypeError(
            f"lax.scatter requires arguments to have the same dtypes, got {x.dtype.name}, "
            f"{upd.dtype.name}."
        )
    window_dims, inserted = tuple(dn.update_window_dims), tuple(dn.inserted_window_dims)
    batching, to_operand = tuple(dn.operand_batching_dims), tuple(dn.scatter_dims_to_operand_dims)
    if idx.ndim < 1:
        raise TypeError(
            f"Scatter index leaf dimension must be within [0, rank(indices) + 1). "
            f"rank(indices) is {idx.ndim} and scatter index leaf dimension is {idx.ndim - 1}."
        )
    expected_rank = idx.ndim - 1 + len(window_dims)
    if upd.ndim != expected_rank:
        raise TypeError(f"Updates tensor must be of rank {expected_rank}; got {upd.ndim}.")
    for dims, rank, name in (
        (window_dims, upd.ndim, "update_window_dims"),
        (inserted, x.ndim, "inserted_window_dims"),
    ):
        _sorted(dims, "scatter", name)
        _unique(dims, "scatter", name)
        _sorted_in_range(dims, rank, "scatter", name)
    _sorted(batching, "scatter", "operand_batching_dims")
    _unique(batching, "scatter", "operand_batching_dims")
    _sorted_in_range(batching, x.ndim, "scatter", "operand_batching_dims")
    _disjoint(inserted, batching, "scatter", "inserted_window_dims", "operand_batching_dims")
    _disjoint(
        to_operand, batching, "scatter", "scatter_dims_to_operand_dims", "operand_batching_dims"
    )
    indices_batching = tuple(dn.scatter_indices_batching_dims)
    _check_batching("scatter", x, idx, batching, indices_batching, "scatter_indices_batching_dims")
    scatter_update_dims = [d for d in range(upd.ndim) if d not in window_dims]
    operand_batch = tuple(x.shape[i] for i in batching)
    update_batch = tuple(upd.shape[scatter_update_dims[i]] for i in indices_batching)
    if operand_batch != update_batch:
        raise TypeError(
            f"Scatter op requires operand batching dimensions and updates batching dimensions "
            f"to have the same shape, got {operand_batch} and {update_batch}."
        )
    window_size = len(window_dims) + len(inserted) + len(batching)
    if x.ndim != window_size:
        raise TypeError(
            f"Scatter op has window of size {window_size}; doesn't match operand of rank {x.ndim}."
        )
    if len(to_operand) != idx.shape[-1]:
        raise TypeError(
            f"Scatter op has {len(to_operand)} elements in scatter_dims_to_operand_dims and "
            f"the bound of dimension index_vector_dim={idx.ndim - 1} of indices is "
            f"{idx.shape[-1]}. These two numbers must be equal"
        )
    for i, d in enumerate(to_operand):
        if d < 0 or d >= x.ndim:
            raise TypeError(
                f"Invalid scatter_dims_to_operand_dims mapping; domain is [0, {x.ndim}), "
                f"got: {i}->{d}."
            )
    _unique(to_operand, "scatter", "scatter_dims_to_operand_dims")
    dropped = set(inserted) | set(batching)
    max_sizes = [s for i, s in enumerate(x.shape) if i not in dropped]
    for bound, d in zip(max_sizes, window_dims, strict=False):
        if bound < upd.shape[d]:
            raise TypeError(
                f"Bounds of the window dimensions of updates must not exceed the bounds of the "
                f"corresponding dimensions of operand. For dimension {d}, updates bound is "
                f"{upd.shape[d]}, operand bound is {bound}."
            )
    for d, bound in zip(scatter_update_dims, idx.shape[:-1], strict=False):
        if upd.shape[d] != bound:
            raise TypeError(
                f"Bounds of the scatter dimensions of updates must be the same as the bounds "
                f"of the corresponding dimensions of scatter indices. For scatter dimension "
                f"{d}, updates bound is {upd.shape[d]}, indices bound is {bound}."
            )
