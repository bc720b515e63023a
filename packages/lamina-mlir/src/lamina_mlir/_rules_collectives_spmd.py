"""Lowering of collectives over named axes inside a manual computation (`shard_map`).

Each collective acts within groups of partition ids: one group per position of the mesh axes
it does not name, listed row-major over the axes it names in the order given
(`SpmdContext.device_groups`, JAX's `axis_groups`); `axis_index_groups` split each of those
into the subgroups it lists. As JAX does, every cross-device op carries the collective channel
(`#stablehlo.channel_handle<handle = 1, type = 1>`: JAX uses one fixed channel id for all
collectives, not a counter) and, except `collective_permute` and `all_to_all`, global device
ids. Uneven groups are padded with -1. `axis_index` is arithmetic on `partition_id`.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy
from jaxlib.mlir.dialects import stablehlo as hlo

from lamina_core.ir import AbstractMesh, AxisType, PartitionSpec
from lamina_mlir import _hlo
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._ir_types import tensor_type
from lamina_mlir._mlir_context import ContextCaches, IrValue
from lamina_mlir._rules_reductions import Combine
from lamina_mlir._rules_shard_map import SpmdContext
from lamina_mlir._rules_util import array_aval, out_type
from lamina_mlir._sharding import sharding_attr

COLLECTIVE_CHANNEL_ID = 1
DEVICE_TO_DEVICE = 1


def names_of(axis_name: Any) -> tuple[Any, ...]:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def replica_groups(
    spmd: SpmdContext, axes: Sequence[Any], axis_index_groups: Any
) -> list[list[int]]:
    """The partition-id groups of a collective over the mesh axes `axes`."""
    groups = spmd.device_groups(tuple(axes))
    if axis_index_groups is not None:
        groups = [[g[i] for i in sub] for g in groups for sub in axis_index_groups]
    return groups


def _i64_elements(array: np.ndarray) -> ir.Attribute:
    data = np.ascontiguousarray(array, dtype=np.int64)
    # ndarrays have the buffer protocol, which NumPy's stubs do not declare for Python 3.11.
    return ir.DenseIntElementsAttr.get(data)  # type: ignore[call-overload,no-any-return]


def groups_attr(groups: Sequence[Sequence[int]]) -> ir.Attribute:
    padded = list(itertools.zip_longest(*groups, fillvalue=-1))
    return _i64_elements(np.array(padded, dtype=np.int64).T)


def _spmd_attrs(
    groups: Sequence[Sequence[int]], *, global_ids: bool = True
) -> dict[str, ir.Attribute]:
    attrs = {
        "replica_groups": groups_attr(groups),
        "channel_handle": hlo.ChannelHandle.get(COLLECTIVE_CHANNEL_ID, DEVICE_TO_DEVICE),
    }
    if global_ids:
        attrs["use_global_device_ids"] = ir.UnitAttr.get()
    return attrs


def _reducer_region(
    op: ir.Operation,
    element: ir.Type,
    combine: Combine,
    caches: ContextCaches,
    replicated_on: AbstractMesh | None = None,
) -> None:
    """The scalar combining region of a reducing collective; with `replicated_on`, its result
    is constrained replicated over that mesh (JAX's, when some mesh axes are still Auto)."""
    scalar = ir.RankedTensorType.get([], element)
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        out = combine(caches, *block.arguments)
        if replicated_on is not None:
            attr = sharding_attr(PartitionSpec(), 0, replicated_on)
            out = sdy.ShardingConstraintOp(out, attr).result
        _hlo.return_([out])


def _partly_auto(spmd: SpmdContext) -> bool:
    """Manual over some mesh axes while others are Auto (a partial-manual shard_map)."""
    mesh = spmd.mesh
    return bool(spmd.manual_axes) and any(
        t is AxisType.Auto
        for n, t in zip(mesh.axis_names, mesh.axis_types, strict=True)
        if n not in spmd.manual_axes
    )


def all_reduce(
    ctx: LoweringRuleContext,
    spmd: SpmdContext,
    x: IrValue,
    axes: Sequence[Any],
    axis_index_groups: Any,
    combine: Combine,
) -> IrValue:
    """`stablehlo.all_reduce` of `x` over the named `axes`, reducing with `combine`."""
    groups = replica_groups(spmd, axes, axis_index_groups)
    op = _hlo.emit("stablehlo.all_reduce", [x.type], [x], _spmd_attrs(groups), regions=1)
    element = ir.RankedTensorType(x.type).element_type
    replicated_on = spmd.mesh.abstract_mesh if _partly_auto(spmd) else None
    _reducer_region(op, element, combine, ctx.caches, replicated_on)
    return op.result


def _index_in_full_mesh(ctx: LoweringRuleContext, spmd: SpmdContext, name: Any) -> IrValue:
    """This partition's index along mesh axis `name`: `partition_id` divided by the size of
    the mesh axes after it, modulo its size, as int32."""
    caches = ctx.caches
    mesh = spmd.mesh
    pos = list(mesh.axis_names).index(name)
    sizes = mesh.axis_sizes
    after = int(np.prod(sizes[pos + 1 :], dtype=np.int64))
    div = _hlo.scalar_constant(caches, after, np.dtype(np.uint32))
    mod = _hlo.scalar_constant(caches, sizes[pos], np.dtype(np.uint32))
    u32 = tensor_type(caches, (), np.dtype(np.uint32))
    pid = _hlo.emit1("stablehlo.partition_id", u32)
    quotient = _hlo.emit1("stablehlo.divide", u32, pid, div)
    index = _hlo.emit1("stablehlo.remainder", u32, quotient, mod)
    return _hlo.convert(caches, index, (), np.dtype(np.int32))


def axis_index(ctx: LoweringRuleContext, spmd: SpmdContext, axis_name: Any) -> IrValue:
    names = names_of(axis_name)
    if not names:
        raise ValueError("axis_index: empty axis name")
    if len(names) > 1:
        raise NotImplementedError(
            "`axis_index` lowering rule does not support multiple axis names."
        )
    (name,) = names
    mesh = spmd.mesh
    if name not in mesh.axis_names:
        raise NameError(f"unbound axis name: {name}")
    if not spmd.manual_axes or spmd.manual_axes == frozenset(mesh.axis_names):
        return _index_in_full_mesh(ctx, spmd, name)
    # Some mesh axes are still automatic: as JAX does, compute the index in a nested manual
    # computation over the remaining axes (an axis of size 1 has index 0).
    caches = ctx.caches
    if mesh.shape[name] == 1:
        return _hlo.scalar_constant(caches, 0, np.dtype(np.int32))
    rest = [n for n in mesh.axis_names if n not in spmd.manual_axes]
    i32 = tensor_type(caches, (), np.dtype(np.int32))
    op = sdy.ManualComputationOp(
        [i32],
        [],
        sdy.TensorShardingPerValueAttr.get([]),
        sdy.TensorShardingPerValueAttr.get([sharding_attr(PartitionSpec(), 0, mesh.abstract_mesh)]),
        sdy.ManualAxesAttr.get([ir.StringAttr.get(str(n)) for n in rest]),
    )
    block = op.body.blocks.append()
    full = SpmdContext(mesh, frozenset(mesh.axis_names))
    with ir.InsertionPoint(block):
        sdy.ReturnOp([_index_in_full_mesh(ctx, full, name)])
    return op.results[0]  # type: ignore[no-any-return]


def ppermute(
    ctx: LoweringRuleContext,
    spmd: SpmdContext,
    x: IrValue,
    axis_name: Any,
    perm: Sequence[tuple[int, int]],
    op_name: str = "ppermute",
) -> IrValue:
    """`stablehlo.collective_permute`: the pairs of `perm` (indices along the named axes)
    within each group, as partition ids."""
    groups = replica_groups(spmd, names_of(axis_name), None)
    group_size = len(groups[0])
    srcs = [s % group_size for s, _ in perm]
    dsts = [d % group_size for _, d in perm]
    if len(srcs) != len(set(srcs)) or len(dsts) != len(set(dsts)):
        raise ValueError(f"{op_name} sources and destinations must be unique, got {perm}.")
    pairs = np.zeros((len(groups), len(perm), 2), np.int64)
    for i, group in enumerate(groups):
        ordered = sorted(group)
        for j, (src, dst) in enumerate(perm):
            pairs[i, j] = (ordered[src], ordered[dst])
    attrs = {
        "source_target_pairs": _i64_elements(pairs.reshape((-1, 2))),
        "channel_handle": hlo.ChannelHandle.get(COLLECTIVE_CHANNEL_ID, DEVICE_TO_DEVICE),
    }
    return _hlo.emit1("stablehlo.collective_permute", x.type, x, attributes=attrs)


def all_gather(
    ctx: LoweringRuleContext,
    spmd: SpmdContext,
    x: IrValue,
    *,
    all_gather_dimension: int,
    axis_name: Any,
    axis_index_groups: Any,
    tiled: bool,
) -> IrValue:
    """`stablehlo.all_gather` along `all_gather_dimension`; untiled, a unit dimension is
    added there first (`broadcast_in_dim`)."""
    caches = ctx.caches
    aval = array_aval(ctx.avals_in[0])
    if not tiled:
        shape = list(aval.shape)
        shape.insert(all_gather_dimension, 1)
        dims = [i for i in range(len(shape)) if i != all_gather_dimension]
        x = _hlo.broadcast_in_dim(caches, x, tuple(shape), aval.dtype, dims)
    groups = replica_groups(spmd, names_of(axis_name), axis_index_groups)
    attrs = _spmd_attrs(groups)
    attrs["all_gather_dim"] = _hlo.i64_attr(caches, all_gather_dimension)
    return _hlo.emit("stablehlo.all_gather", [out_type(ctx)], [x], attrs).result


def reduce_scatter(
    ctx: LoweringRuleContext,
    spmd: SpmdContext,
    x: IrValue,
    combine: Combine,
    *,
    scatter_dimension: int,
    axis_name: Any,
    axis_index_groups: Any,
    axis_size: int,
    tiled: bool,
) -> IrValue:
    """`stablehlo.reduce_scatter` along `scatter_dimension` (untiled: then reshaped to drop
    the scattered dimension, of size 1)."""
    caches = ctx.caches
    aval = array_aval(ctx.avals_in[0])
    shape = list(aval.shape)
    shape[scatter_dimension] //= axis_size
    groups = replica_groups(spmd, names_of(axis_name), axis_index_groups)
    attrs = _spmd_attrs(groups)
    attrs["scatter_dimension"] = _hlo.i64_attr(caches, scatter_dimension)
    op = _hlo.emit(
        "stablehlo.reduce_scatter",
        [tensor_type(caches, tuple(shape), aval.dtype)],
        [x],
        attrs,
        regions=1,
    )
    _reducer_region(op, ir.RankedTensorType(x.type).element_type, combine, caches)
    if tiled:
        return op.result
    return _hlo.emit1("stablehlo.reshape", out_type(ctx), op.result)


def all_to_all(
    ctx: LoweringRuleContext,
    spmd: SpmdContext,
    x: IrValue,
    *,
    split_axis: int,
    concat_axis: int,
    axis_name: Any,
    axis_index_groups: Any,
) -> IrValue:
    """`stablehlo.all_to_all` (the identity for groups of one, as JAX lowers it)."""
    caches = ctx.caches
    groups = replica_groups(spmd, names_of(axis_name), axis_index_groups)
    split_count = len(groups[0])
    if split_count == 1:
        return x
    if any(len(g) != split_count for g in groups):
        raise ValueError("Replica groups must be equally sized")
    attrs = _spmd_attrs(groups, global_ids=False)
    attrs["split_dimension"] = _hlo.i64_attr(caches, split_axis)
    attrs["concat_dimension"] = _hlo.i64_attr(caches, concat_axis)
    attrs["split_count"] = _hlo.i64_attr(caches, split_count)
    return _hlo.emit("stablehlo.all_to_all", [out_type(ctx)], [x], attrs).result


__all__ = [
    "all_gather",
    "all_reduce",
    "all_to_all",
    "axis_index",
    "groups_attr",
    "names_of",
    "ppermute",
    "reduce_scatter",
    "replica_groups",
]
