"""Lowering of the collectives: psum, pmax and pmin over positional axes are plain reductions
(an empty set of axes is the identity); over named axes, inside a manual computation
(`shard_map`), every collective lowers to a cross-device StableHLO op
(`_rules_collectives_spmd`), as JAX lowers it: the positional axes are reduced first.

Outside any manual computation there is no device mesh to name axes of: named collectives
refuse with a clear error. Under `vmap` no named collective reaches lowering (the batching
rules rewrite them into ordinary operations).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NoReturn

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from lamina_core import lax
from lamina_core.ir import Primitive
from lamina_core.lax import (
    all_gather_p,
    all_to_all_p,
    axis_index_p,
    pbroadcast_p,
    pmax_p,
    pmin_p,
    ppermute_p,
    precv_p,
    psend_p,
    psum_invariant_p,
    psum_p,
    ragged_all_to_all_p,
    reduce_scatter_p,
)
from lamina_core.trace import pvary_p
from lamina_mlir import _rules_collectives_spmd as spmd_rules
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._rules_reductions import REDUCTIONS, _reduction_rule
from lamina_mlir._rules_shard_map import SpmdContext, spmd_context
from lamina_mlir._rules_util import register


def _refuse(prim: Primitive, names: Any) -> NoReturn:
    raise NotImplementedError(
        f"lowering {prim.name} over named axes {names} needs a device mesh, which Lamina does "
        "not support yet"
    )


def _spmd_or_refuse(prim: Primitive, names: Any) -> SpmdContext:
    spmd = spmd_context()
    if spmd is None:
        _refuse(prim, names)
    return spmd


def _collective_rule(prim: Primitive, reducer: Primitive) -> Any:
    combine, identity = REDUCTIONS[reducer]
    reduce = _reduction_rule(combine, identity)

    def rule(
        ctx: LoweringRuleContext, x: IrValue, *, axes: Sequence[Any], axis_index_groups: Any
    ) -> list[IrValue]:
        named = tuple(a for a in axes if not isinstance(a, int))
        positional = tuple(a for a in axes if isinstance(a, int))
        spmd = _spmd_or_refuse(prim, named) if named else None
        if positional:
            x = reduce(ctx, x, axes=positional)[0]
        if spmd is None:
            return [x]
        return [spmd_rules.all_reduce(ctx, spmd, x, named, axis_index_groups, combine)]

    return rule


for _prim, _reducer in (
    (psum_p, lax.reduce_sum_p),
    (pmax_p, lax.reduce_max_p),
    (pmin_p, lax.reduce_min_p),
):
    register(_prim)(_collective_rule(_prim, _reducer))


@register(axis_index_p)
def _axis_index_rule(ctx: LoweringRuleContext, *, axis_name: Any) -> list[IrValue]:
    spmd = _spmd_or_refuse(axis_index_p, axis_name)
    return [spmd_rules.axis_index(ctx, spmd, axis_name)]


@register(ppermute_p)
def _ppermute_rule(
    ctx: LoweringRuleContext, x: IrValue, *, axis_name: Any, perm: Sequence[tuple[int, int]]
) -> list[IrValue]:
    spmd = _spmd_or_refuse(ppermute_p, axis_name)
    return [spmd_rules.ppermute(ctx, spmd, x, axis_name, perm)]


@register(all_gather_p)
def _all_gather_rule(
    ctx: LoweringRuleContext,
    x: IrValue,
    *,
    all_gather_dimension: int,
    axis_name: Any,
    axis_index_groups: Any,
    axis_size: int,
    tiled: bool,
) -> list[IrValue]:
    spmd = _spmd_or_refuse(all_gather_p, axis_name)
    out = spmd_rules.all_gather(
        ctx, spmd, x, all_gather_dimension=all_gather_dimension, axis_name=axis_name,
        axis_index_groups=axis_index_groups, tiled=tiled,
    )  # fmt: skip
    return [out]


@register(reduce_scatter_p)
def _reduce_scatter_rule(
    ctx: LoweringRuleContext,
    x: IrValue,
    *,
    scatter_dimension: int,
    axis_name: Any,
    axis_index_groups: Any,
    axis_size: int,
    tiled: bool,
) -> list[IrValue]:
    spmd = _spmd_or_refuse(reduce_scatter_p, axis_name)
    combine, _ = REDUCTIONS[lax.reduce_sum_p]
    out = spmd_rules.reduce_scatter(
        ctx, spmd, x, combine, scatter_dimension=scatter_dimension, axis_name=axis_name,
        axis_index_groups=axis_index_groups, axis_size=axis_size, tiled=tiled,
    )  # fmt: skip
    return [out]


@register(all_to_all_p)
def _all_to_all_rule(
    ctx: LoweringRuleContext,
    x: IrValue,
    *,
    split_axis: int,
    concat_axis: int,
    axis_name: Any,
    axis_index_groups: Any,
    tiled: bool,
) -> list[IrValue]:
    spmd = _spmd_or_refuse(all_to_all_p, axis_name)
    out = spmd_rules.all_to_all(
        ctx, spmd, x, split_axis=split_axis, concat_axis=concat_axis, axis_name=axis_name,
        axis_index_groups=axis_index_groups,
    )  # fmt: skip
    return [out]


@register(pbroadcast_p)
def _pbroadcast_rule(
    ctx: LoweringRuleContext, x: IrValue, *, axis_name: Any, source: int
) -> NoReturn:
    _spmd_or_refuse(pbroadcast_p, axis_name)
    # JAX lowers pbroadcast (to `stablehlo.collective_broadcast`) on GPU only.
    raise NotImplementedError(
        "MLIR translation rule for primitive 'pbroadcast' not found for platform cpu"
    )


@register(psend_p)
def _psend_rule(ctx: LoweringRuleContext, x: IrValue, *, axis_name: Any, perm: Any) -> NoReturn:
    # JAX lowers psend (to `stablehlo.send`) on GPUs only: Lamina lowers for the CPU.
    raise NotImplementedError("psend is currently only implemented on GPU")


@register(precv_p)
def _precv_rule(
    ctx: LoweringRuleContext, token: IrValue, *, out_shape: Any, axis_name: Any, perm: Any
) -> NoReturn:
    raise NotImplementedError("precv is currently only implemented on GPU")


@register(ragged_all_to_all_p)
def _ragged_all_to_all_rule(
    ctx: LoweringRuleContext, *operands: IrValue, axis_name: Any, axis_index_groups: Any
) -> list[IrValue]:
    # JAX's lowering is a `custom_call` XLA expands for the accelerators it supports (not
    # the CPU): the groups and channel travel in a dictionary `backend_config`.
    spmd = _spmd_or_refuse(ragged_all_to_all_p, axis_name)
    groups = spmd_rules.replica_groups(spmd, spmd_rules.names_of(axis_name), axis_index_groups)
    if any(len(g) != len(groups[0]) for g in groups):
        raise ValueError("Replica groups must be equally sized")
    config = {
        "replica_groups": spmd_rules.groups_attr(groups),
        "channel_id": ir.IntegerAttr.get(
            ir.IntegerType.get_signless(64), spmd_rules.COLLECTIVE_CHANNEL_ID
        ),
    }
    op = hlo.CustomCallOp(
        [operands[1].type],
        list(operands),
        call_target_name=ir.StringAttr.get("ragged_all_to_all"),
        backend_config=ir.DictAttr.get(config),
        api_version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 4),
    )
    return [op.result]


_psum_rule = _collective_rule(psum_p, lax.reduce_sum_p)


@register(psum_invariant_p)
def _psum_invariant_rule(ctx: LoweringRuleContext, x: IrValue, *, axes: Any) -> list[IrValue]:
    # The all-reduce of psum; only the types (vma) differ, which lowering does not see.
    return _psum_rule(ctx, x, axes=axes, axis_index_groups=None)  # type: ignore[no-any-return]  # rule factory returns Any


@register(pvary_p)
def _pvary_rule(ctx: LoweringRuleContext, x: IrValue, *, axes: Any) -> list[IrValue]:
    # A cast of types only: nothing on the devices.
    return [x]
