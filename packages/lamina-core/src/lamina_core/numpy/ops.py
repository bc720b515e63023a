"""`jax.ops` for Lamina: `segment_sum`, `segment_prod`, `segment_max`, `segment_min`.

A segment reduction is an indexed update of an array of the reduction's identity, one row per
segment: `out.at[segment_ids].add(data)` and its kin, with out-of-range ids dropped by default.
With `bucket_size` the rows of `data` are first spread over buckets of that many consecutive
rows (one scatter into a `(buckets, segments, ...)` array), then the buckets are reduced, which
keeps long sums and products more accurate; JAX's composition, so the jaxprs print alike.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from lamina_core import lax as _lax
from lamina_core.ir import dtypes
from lamina_core.numpy import _creation, _reductions
from lamina_core.numpy._index_update import Mode, ScatterOp, scatter_update
from lamina_core.numpy._promote import check_arraylike
from lamina_core.numpy._util import Array, ArrayLike, dtype_of, shape_of
from lamina_core.trace import concrete_or_error

Reducer = Callable[..., Array]

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]


def _identity(op: ScatterOp, dtype: np.dtype) -> bool | int | float:
    """The value no update changes: where a segment that receives nothing stays."""
    if op is _lax.scatter_add:
        return 0
    if op is _lax.scatter_mul:
        return 1
    smallest = op is _lax.scatter_max
    if dtype == np.dtype(bool):
        return not smallest
    if dtypes.issubdtype(dtype, np.integer):
        info = dtypes.iinfo(dtype)
        return int(info.min if smallest else info.max)
    return -float("inf") if smallest else float("inf")


def _no_sharding(name: str, out_sharding: Any) -> None:
    if out_sharding is not None:
        raise NotImplementedError(
            f"{name}: out_sharding is not supported by Lamina yet (got {out_sharding!r})"
        )


def _segment_update(
    name: str,
    data: ArrayLike,
    segment_ids: ArrayLike,
    scatter_op: ScatterOp,
    reducer: Reducer,
    num_segments: int | None,
    indices_are_sorted: bool,
    unique_indices: bool,
    bucket_size: int | None,
    mode: Mode,
) -> Array:
    check_arraylike(name, data, segment_ids)
    mode = _lax.GatherScatterMode.FILL_OR_DROP if mode is None else mode
    data = _creation.asarray(data)
    segment_ids = _creation.asarray(segment_ids)
    dtype = dtype_of(data)
    if num_segments is None:
        # A traced `segment_ids` gives a traced count, refused just below (as JAX does).
        num_segments = np.max(segment_ids) + 1
    # JAX names segment_sum here whichever reduction is asked for.
    context = "segment_sum() `num_segments` argument."
    count = operator.index(concrete_or_error(num_segments, context))
    if count < 0:
        raise ValueError("num_segments must be non-negative.")
    rest = tuple(shape_of(data)[1:])
    identity = _identity(scatter_op, dtype)
    if bucket_size is None:
        out = _creation.full((count, *rest), identity, dtype=dtype)
        return scatter_update(
            out,
            segment_ids,
            data,
            scatter_op,
            indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices,
            mode=mode,
            normalize_indices=False,
        )
    size = int(np.prod(shape_of(segment_ids)))
    buckets = -(-size // bucket_size)
    out = _creation.full((buckets, count, *rest), identity, dtype=dtype)
    bucket_of_row = _creation.arange(shape_of(segment_ids)[0]) // bucket_size
    out = scatter_update(
        out,
        np.index_exp[bucket_of_row, segment_ids[None, :]],
        data,
        scatter_op,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        mode=mode,
        normalize_indices=False,
    )
    return reducer(out, axis=0).astype(dtype)


def segment_sum(
    data: ArrayLike,
    segment_ids: ArrayLike,
    num_segments: int | None = None,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    bucket_size: int | None = None,
    mode: Mode = None,
    out_sharding: Any = None,
) -> Array:
    """The sum of the rows of `data` in each segment (TensorFlow's `segment_sum`).

    Args:
      data: the values; rows (along the leading axis) are summed.
      segment_ids: integer segment of each row, in any order, repeats allowed.
      num_segments: the number of segments (the output's leading size); by default
        `max(segment_ids) + 1`, which needs concrete `segment_ids` (pass it under `jit`).
      indices_are_sorted: a promise that `segment_ids` is sorted.
      unique_indices: a promise that `segment_ids` has no repeats.
      bucket_size: sum buckets of this many rows separately, then the buckets (more accurate).
      mode: a `GatherScatterMode` for ids outside `[0, num_segments)`; dropped by default.
      out_sharding: not supported by Lamina yet; must be None.

    Returns:
      An array of shape `(num_segments,) + data.shape[1:]` and `data`'s dtype.

    Raises:
      ValueError: `num_segments` is negative.
      ConcretizationTypeError: `num_segments` is traced (or missing with traced ids).
    """
    _no_sharding("segment_sum", out_sharding)
    return _segment_update(
        "segment_sum",
        data,
        segment_ids,
        _lax.scatter_add,
        _reductions.sum,
        num_segments,
        indices_are_sorted,
        unique_indices,
        bucket_size,
        mode,
    )


def segment_prod(
    data: ArrayLike,
    segment_ids: ArrayLike,
    num_segments: int | None = None,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    bucket_size: int | None = None,
    mode: Mode = None,
    out_sharding: Any = None,
) -> Array:
    """The product of the rows of `data` in each segment; arguments as `segment_sum`'s."""
    _no_sharding("segment_prod", out_sharding)
    return _segment_update(
        "segment_prod",
        data,
        segment_ids,
        _lax.scatter_mul,
        _reductions.prod,
        num_segments,
        indices_are_sorted,
        unique_indices,
        bucket_size,
        mode,
    )


def segment_max(
    data: ArrayLike,
    segment_ids: ArrayLike,
    num_segments: int | None = None,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    bucket_size: int | None = None,
    mode: Mode = None,
    out_sharding: Any = None,
) -> Array:
    """The maximum of the rows of `data` in each segment (`-inf`, or the dtype's least value,
    where a segment is empty); arguments as `segment_sum`'s."""
    _no_sharding("segment_max", out_sharding)
    return _segment_update(
        "segment_max",
        data,
        segment_ids,
        _lax.scatter_max,
        _reductions.max,
        num_segments,
        indices_are_sorted,
        unique_indices,
        bucket_size,
        mode,
    )


def segment_min(
    data: ArrayLike,
    segment_ids: ArrayLike,
    num_segments: int | None = None,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    bucket_size: int | None = None,
    mode: Mode = None,
    out_sharding: Any = None,
) -> Array:
    """The minimum of the rows of `data` in each segment (`inf`, or the dtype's greatest value,
    where a segment is empty); arguments as `segment_sum`'s."""
    _no_sharding("segment_min", out_sharding)
    return _segment_update(
        "segment_min",
        data,
        segment_ids,
        _lax.scatter_min,
        _reductions.min,
        num_segments,
        indices_are_sorted,
        unique_indices,
        bucket_size,
        mode,
    )
