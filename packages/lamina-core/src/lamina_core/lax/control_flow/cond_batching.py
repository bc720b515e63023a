"""Batching of `cond`, as JAX's rule.

With an unmapped index the result is a `cond` of batched branches. With a mapped index every
branch runs, on operands masked with `stop_gradient` where another branch is selected (so
reverse mode through the unselected branches sees no gradient), and the outputs are merged
with `select_n` on the index.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core.interpreters import AxisData, BatchDim, batching_rules
from lamina_core.ir import ClosedJaxpr
from lamina_core.lax._batching_common import bdim_at_front, moveaxis
from lamina_core.lax._elementwise import eq
from lamina_core.lax._selection import select_n
from lamina_core.lax._stop_gradient import stop_gradient
from lamina_core.lax._structural import broadcast_in_dim
from lamina_core.lax.control_flow.conditionals import cond_p
from lamina_core.trace import eval_jaxpr, typeof
from lamina_core.transforms import batch_jaxpr_front


def _bcast_select(pred: Any, on_true: Any, on_false: Any) -> Any:
    shape = typeof(on_true).shape  # type: ignore[attr-defined]  # arrays only here
    pred_shape = typeof(pred).shape  # type: ignore[attr-defined]  # arrays only here
    if len(pred_shape) != len(shape):
        pred = broadcast_in_dim(pred, shape, tuple(range(len(pred_shape))))
    return select_n(pred, on_false, on_true)


def _bcast_select_n(index: Any, *cases: Any) -> Any:
    shape = typeof(cases[0]).shape  # type: ignore[attr-defined]  # arrays only here
    index_shape = typeof(index).shape  # type: ignore[attr-defined]  # arrays only here
    if len(index_shape) != len(shape):
        index = broadcast_in_dim(index, shape, tuple(range(len(index_shape))))
    return select_n(index, *cases)


def _cond_batch(
    axis_data: AxisData,
    vals: Sequence[Any],
    dims: Sequence[BatchDim],
    *,
    branches: tuple[ClosedJaxpr, ...],
) -> tuple[list[Any], list[BatchDim]]:
    index, *ops = vals
    index_dim, *op_dims = dims
    size = axis_data.size
    if index_dim is not None:
        index, *ops = (bdim_at_front(x, d, size) for x, d in zip(vals, dims, strict=True))
        everything = [True] * len(branches[0].in_avals)
        mapped = [True] * len(branches[0].out_avals)
        branch_outs = []
        for i, branch in enumerate(branches):
            batched, _ = batch_jaxpr_front(branch, axis_data, everything, mapped)
            selected = eq(index, np.array(i, typeof(index).dtype))  # type: ignore[attr-defined]  # an integer index
            masked = [_bcast_select(selected, x, stop_gradient(x)) for x in ops]
            branch_outs.append(eval_jaxpr(batched, (), *masked))
        outs = [_bcast_select_n(index, *cases) for cases in zip(*branch_outs, strict=True)]
        return outs, [0] * len(outs)
    ops_batched = [d is not None for d in op_dims]
    ops = [moveaxis(x, d, 0) if d is not None else x for x, d in zip(ops, op_dims, strict=True)]
    n_out = len(branches[0].out_avals)
    per_branch = [
        batch_jaxpr_front(b, axis_data, ops_batched, [False] * n_out)[1] for b in branches
    ]
    out_batched = [any(col) for col in zip(*per_branch, strict=True)]
    batched_branches = tuple(
        batch_jaxpr_front(b, axis_data, ops_batched, out_batched)[0] for b in branches
    )
    outs = cond_p.bind(index, *ops, branches=batched_branches)
    return list(outs), [0 if b else None for b in out_batched]


batching_rules.set(cond_p, _cond_batch)
