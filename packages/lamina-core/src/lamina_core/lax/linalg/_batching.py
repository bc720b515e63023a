"""Batching rules of the linalg primitives. Each takes leading batch dimensions already, so
the mapped axis moves to the front of every operand (unmapped ones are broadcast), as JAX's
`expand_dims_batcher`; `triangular_solve` with only `b` mapped folds the mapped axis into
`b`'s free dimension instead, solving once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lamina_core.interpreters import AxisData, BatchDim, batching_rules
from lamina_core.ir import Primitive
from lamina_core.lax._batching_common import bdim_at_front, moveaxis, shape_of
from lamina_core.lax._shape import reshape
from lamina_core.lax.linalg._primitives import (
    cholesky_p,
    lu_p,
    lu_pivots_to_permutation_p,
    triangular_solve,
    triangular_solve_p,
)


def _leading_batcher(prim: Primitive) -> None:
    def rule(
        axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any
    ) -> tuple[Any, Any]:
        size = next(shape_of(x)[d] for x, d in zip(vals, dims, strict=True) if d is not None)
        args = [bdim_at_front(x, d, size) for x, d in zip(vals, dims, strict=True)]
        out = prim.bind(*args, **params)
        if prim.multiple_results:
            return list(out), [0] * len(out)
        return out, 0

    batching_rules.set(prim, rule)


_leading_batcher(cholesky_p)
_leading_batcher(lu_p)
_leading_batcher(lu_pivots_to_permutation_p)


@batching_rules.register(triangular_solve_p)
def _triangular_solve_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any
) -> tuple[Any, Any]:
    (a, b), (bd_a, bd_b) = vals, dims
    if bd_a is None and bd_b is not None:
        left = params["left_side"]
        b = moveaxis(b, bd_b, -1 if left else -2)
        shape = shape_of(b)
        if left:
            flat = reshape(b, (*shape[:-2], shape[-2] * shape[-1]))
            out_dim = len(shape) - 1
        else:
            flat = reshape(b, (*shape[:-3], shape[-3] * shape[-2], shape[-1]))
            out_dim = len(shape) - 2
        return reshape(triangular_solve(a, flat, **params), shape), out_dim
    a = bdim_at_front(a, bd_a, axis_data.size)
    b = bdim_at_front(b, bd_b, axis_data.size)
    return triangular_solve(a, b, **params), 0
