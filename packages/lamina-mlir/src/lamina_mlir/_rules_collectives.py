"""Lowering of the reduction collectives left after `vmap`: psum, pmax and pmin over
positional axes only, which are plain reductions (an empty set of axes is the identity).

Collectives over named axes lower to cross-device operations, which need a device mesh: their
rules here refuse with a clear error. Under `vmap` no named collective reaches lowering (the
batching rules rewrite them into ordinary operations).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NoReturn

from lamina_core import lax
from lamina_core.lax import _collectives as coll
from lamina_core.primitive import Primitive
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._rules_reductions import REDUCTIONS, _reduction_rule
from lamina_mlir._rules_util import register


def _refuse(prim: Primitive, names: Any) -> NoReturn:
    raise NotImplementedError(
        f"lowering {prim.name} over named axes {names} needs a device mesh, which Lamina does "
        "not support yet"
    )


def _collective_rule(prim: Primitive, reducer: Primitive) -> Any:
    reduce = _reduction_rule(*REDUCTIONS[reducer])

    def rule(
        ctx: LoweringRuleContext, x: IrValue, *, axes: Sequence[Any], axis_index_groups: Any
    ) -> list[IrValue]:
        named = tuple(a for a in axes if not isinstance(a, int))
        if named:
            _refuse(prim, named)
        if not axes:
            return [x]
        out: list[IrValue] = reduce(ctx, x, axes=tuple(axes))
        return out

    return rule


for _prim, _reducer in (
    (coll.psum_p, lax.reduce_sum_p),
    (coll.pmax_p, lax.reduce_max_p),
    (coll.pmin_p, lax.reduce_min_p),
):
    register(_prim)(_collective_rule(_prim, _reducer))


def _named_only_rule(prim: Primitive) -> Any:
    def rule(ctx: LoweringRuleContext, *args: IrValue, axis_name: Any, **params: Any) -> NoReturn:
        _refuse(prim, axis_name)

    return rule


for _prim in (
    coll.ppermute_p,
    coll.pbroadcast_p,
    coll.all_gather_p,
    coll.reduce_scatter_p,
    coll.all_to_all_p,
    coll.axis_index_p,
):
    register(_prim)(_named_only_rule(_prim))
