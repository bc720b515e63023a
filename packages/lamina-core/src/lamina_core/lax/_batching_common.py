"""Helpers the lax batching rules share, and the rule families of whole primitive classes.

`moveaxis`, `bdim_at_front` and `broadcast_batched` emit JAX's equations (`transpose`,
`broadcast_in_dim`) so batched jaxprs print as JAX's. `defvectorized`, `defbroadcasting` and
`defreducer` give a primitive JAX's rule for its class in one line. Installs how `vmap`
places an output's mapped axis (`match_axis`) and sums one away (`sum_axis`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core.interpreters import (
    AxisData,
    BatchDim,
    batching_rules,
    install_make_iota,
    install_match_axis,
    install_sum_axis,
)
from lamina_core.ir import NamedSharding, Primitive
from lamina_core.lax._reductions import reduce_sum
from lamina_core.lax._shape import canonicalize_axis, expand_dims, iota, transpose
from lamina_core.lax._structural import broadcast_in_dim_p
from lamina_core.trace import typeof


def ndim_of(x: Any) -> int:
    return len(getattr(typeof(x), "shape", ()))


def shape_of(x: Any) -> tuple[int, ...]:
    return tuple(getattr(typeof(x), "shape", ()))


def moveaxis(x: Any, src: int, dst: int) -> Any:
    """`x` with axis `src` moved to `dst` (a `transpose`; `x` itself if nothing moves)."""
    ndim = ndim_of(x)
    src, dst = canonicalize_axis(src, ndim, "moveaxis"), canonicalize_axis(dst, ndim, "moveaxis")
    if src == dst:
        return x
    perm = [i for i in range(ndim) if i != src]
    perm.insert(dst, src)
    return transpose(x, perm)


def broadcast_batched(x: Any, size: int, axis: int) -> Any:
    """`x` with a new axis of `size` at `axis` (JAX's `batching.broadcast`)."""
    shape = list(shape_of(x))
    shape.insert(axis, size)
    # NumPy integers, as JAX's rule makes them (they print as `np.int64(0)`).
    dims = tuple(np.delete(np.arange(len(shape)), axis))
    return broadcast_in_dim_p.bind(x, shape=tuple(shape), broadcast_dimensions=dims, sharding=None)


def bdim_at_front(x: Any, bdim: BatchDim, size: int) -> Any:
    """`x` with its mapped axis first; an unmapped `x` is broadcast to `size` there."""
    if bdim is None:
        return broadcast_batched(x, size, 0)
    return moveaxis(x, bdim, 0)


def bdim_to(x: Any, bdim: BatchDim, dst: int, size: int) -> Any:
    """`x` with its mapped axis at `dst`; an unmapped `x` is broadcast to `size` there."""
    if bdim is None:
        return broadcast_batched(x, size, dst)
    return moveaxis(x, bdim, dst)


def _match_axis(axis_data: AxisData, src: BatchDim, dst: Any, x: Any) -> Any:
    if src == dst:
        return x
    if src is None:
        return broadcast_batched(x, axis_data.size, canonicalize_axis(dst, ndim_of(x) + 1, "vmap"))
    return moveaxis(x, src, dst)


def _sum_axis(x: Any, axis: int) -> Any:
    return reduce_sum(x, (axis,))


install_match_axis(_match_axis)
install_sum_axis(_sum_axis)
# The index of each element along a vmapped axis, for vmappable containers (`get_idx`).
install_make_iota(lambda size: iota(np.int32, size))


# --- families ------------------------------------------------------------------------------


def defvectorized(prim: Primitive) -> None:
    """`prim` maps elementwise over one operand: the mapped axis stays where it is."""

    def rule(
        axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any
    ) -> tuple[Any, Any]:
        return prim.bind(*vals, **params), dims[0]

    batching_rules.set(prim, rule)


def broadcast_batcher(
    prim: Primitive, vals: Sequence[Any], dims: Sequence[BatchDim], params: dict[str, Any]
) -> tuple[Any, Any]:
    """JAX's rule for broadcasting n-ary primitives.

    When every non-scalar operand has the same shape and the same mapped axis, the primitive
    applies as it is and the axis stays; otherwise mapped operands move their axis to the
    front, unmapped ones get a size-1 axis there (the primitive broadcasts it), and scalars of
    lower rank are expanded.
    """
    shape, dim = next((shape_of(x), d) for x, d in zip(vals, dims, strict=True) if d is not None)
    if all(
        shape_of(x) == shape and d == dim for x, d in zip(vals, dims, strict=True) if ndim_of(x)
    ):
        out = prim.bind(*vals, **params)
        return (out, [dim] * len(out)) if prim.multiple_results else (out, dim)
    moved = [bdim_at_front(x, d, 1) if ndim_of(x) else x for x, d in zip(vals, dims, strict=True)]
    ndim = max(ndim_of(x) for x in moved)
    moved = [
        x if d is None or ndim_of(x) == ndim else _expand_trailing(x, ndim)
        for x, d in zip(moved, dims, strict=True)
    ]
    out = prim.bind(*moved, **params)
    return (out, [0] * len(out)) if prim.multiple_results else (out, 0)


def _expand_trailing(x: Any, ndim: int) -> Any:
    return expand_dims(x, tuple(range(ndim_of(x), ndim)))


def defbroadcasting(prim: Primitive) -> None:
    def rule(
        axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any
    ) -> tuple[Any, Any]:
        return broadcast_batcher(prim, vals, dims, params)

    batching_rules.set(prim, rule)


def reduced_axes(axes: Sequence[int], bdim: int) -> tuple[tuple[Any, ...], int]:
    """The reduction `axes` of a per-example operand, in the batched operand mapped at `bdim`,
    and where the mapped axis is in the result (as JAX's reducer rule; NumPy integers print
    as JAX prints them)."""
    new_axes = tuple(np.where(np.less(axes, bdim), axes, np.add(axes, 1)))
    return new_axes, bdim - sum(1 for a in new_axes if a < bdim)


def sharding_for_vmap(sharding: Any, bdim: int) -> Any:
    """A rule's output sharding with the mapped axis inserted at `bdim`, unconstrained (JAX's
    `get_sharding_for_vmap` with no `spmd_axis_name`); None stays None."""
    if sharding is None:
        return None
    parts = list(sharding.spec.partitions)
    parts.insert(bdim, None)
    return NamedSharding(sharding.mesh, sharding.spec.update(partitions=parts))


def defreducer(prim: Primitive) -> None:
    """`prim` reduces its one operand over `axes`: the mapped axis is kept out of them."""

    def rule(
        axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], *, axes: Any,
        **params: Any,
    ) -> tuple[Any, Any]:  # fmt: skip
        (operand,), (bdim,) = vals, dims
        assert bdim is not None
        new_axes, out_dim = reduced_axes(axes, bdim)
        if params.get("out_sharding") is not None:
            params["out_sharding"] = sharding_for_vmap(params["out_sharding"], out_dim)
        return prim.bind(operand, axes=new_axes, **params), out_dim

    batching_rules.set(prim, rule)


__all__ = [
    "bdim_at_front",
    "bdim_to",
    "broadcast_batched",
    "broadcast_batcher",
    "defbroadcasting",
    "defreducer",
    "defvectorized",
    "moveaxis",
    "ndim_of",
    "reduced_axes",
    "shape_of",
    "sharding_for_vmap",
]
