"""Batching rules of the cumulative reductions: the mapped axis stays where it is and the scan
axis shifts past it (JAX's rule)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lamina_core.interpreters import AxisData, BatchDim, BatchRule, batching_rules
from lamina_core.ir import Primitive
from lamina_core.lax._cumulative import cumlogsumexp_p, cummax_p, cummin_p, cumprod_p, cumsum_p


def _cumulative_rule(prim: Primitive) -> BatchRule:
    def rule(
        axis_data: AxisData,
        vals: Sequence[Any],
        dims: Sequence[BatchDim],
        *,
        axis: int,
        reverse: bool,
    ) -> tuple[Any, BatchDim]:
        (x,), (bdim,) = vals, dims
        assert bdim is not None
        return prim.bind(x, axis=axis if axis < bdim else axis + 1, reverse=reverse), bdim

    return rule


for _prim in (cumsum_p, cumprod_p, cummax_p, cummin_p, cumlogsumexp_p):
    batching_rules.set(_prim, _cumulative_rule(_prim))
