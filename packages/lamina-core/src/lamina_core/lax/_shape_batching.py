"""Batching rules of the shape primitives: reshape, squeeze, transpose, rev, tile, and
broadcast_in_dim.

As in JAX, `reshape`, `squeeze`, `transpose` and `broadcast_in_dim` move the mapped axis to
the front (their per-example params then only shift by one), while `rev` and `tile` keep it
where it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core.interpreters import AxisData, BatchDim, batching_rules
from lamina_core.lax._batching_common import moveaxis, shape_of, sharding_for_vmap
from lamina_core.lax._shape import (
    reshape,
    reshape_p,
    rev,
    rev_p,
    squeeze,
    squeeze_p,
    tile,
    tile_p,
    transpose,
    transpose_p,
)
from lamina_core.lax._structural import broadcast_in_dim_p


def _only(vals: Sequence[Any], dims: Sequence[BatchDim]) -> tuple[Any, int]:
    """The one operand of a unary primitive and its mapped axis (a rule only runs when it is
    mapped)."""
    (x,), (bdim,) = vals, dims
    assert bdim is not None
    return x, bdim


def _reshape_batch(
    axis_data: AxisData,
    vals: Sequence[Any],
    dims: Sequence[BatchDim],
    *,
    new_sizes: Sequence[int],
    dimensions: Sequence[int] | None,
    sharding: Any,
) -> tuple[Any, BatchDim]:
    x, bdim = _only(vals, dims)
    x = moveaxis(x, bdim, 0)
    # The permutation keeps the mapped axis first; JAX shifts the rest with NumPy, but
    # `reshape` turns them back into Python ints.
    perm = None if dimensions is None else (0, *np.add(1, dimensions))
    out_sharding = sharding_for_vmap(sharding, 0)
    return reshape(x, (shape_of(x)[0], *new_sizes), perm, out_sharding=out_sharding), 0


def _squeeze_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], *, dimensions: Sequence[int]
) -> tuple[Any, BatchDim]:
    x, bdim = _only(vals, dims)
    x = moveaxis(x, bdim, 0)
    return squeeze(x, tuple(np.add(1, dimensions))), 0


def _transpose_batch(
    axis_data: AxisData,
    vals: Sequence[Any],
    dims: Sequence[BatchDim],
    *,
    permutation: Sequence[int],
) -> tuple[Any, BatchDim]:
    # One transpose both applies the permutation and brings the mapped axis to the front.
    x, bdim = _only(vals, dims)
    perm = (bdim, *(i if i < bdim else i + 1 for i in permutation))
    return transpose(x, perm), 0


def _rev_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], *, dimensions: Sequence[int]
) -> tuple[Any, BatchDim]:
    x, bdim = _only(vals, dims)
    return rev(x, [i + 1 if i >= bdim else i for i in dimensions]), bdim


def _tile_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], *, reps: Sequence[int]
) -> tuple[Any, BatchDim]:
    x, bdim = _only(vals, dims)
    new_reps = list(reps)
    new_reps.insert(bdim, 1)
    return tile(x, new_reps), bdim


def _broadcast_in_dim_batch(
    axis_data: AxisData,
    vals: Sequence[Any],
    dims: Sequence[BatchDim],
    *,
    shape: Sequence[int],
    broadcast_dimensions: Sequence[int],
    sharding: Any,
) -> tuple[Any, BatchDim]:
    x, bdim = _only(vals, dims)
    size = shape_of(x)[bdim]
    x = moveaxis(x, bdim, 0)
    # Bound directly: the shifted dimensions are NumPy integers in JAX's params and print so.
    out = broadcast_in_dim_p.bind(
        x,
        shape=(size, *shape),
        broadcast_dimensions=(0, *np.add(1, broadcast_dimensions)),
        sharding=sharding_for_vmap(sharding, 0),
    )
    return out, 0


batching_rules.set(reshape_p, _reshape_batch)
batching_rules.set(squeeze_p, _squeeze_batch)
batching_rules.set(transpose_p, _transpose_batch)
batching_rules.set(rev_p, _rev_batch)
batching_rules.set(tile_p, _tile_batch)
batching_rules.set(broadcast_in_dim_p, _broadcast_in_dim_batch)
