"""Batching rule of `dot_general`: the mapped axis joins the contraction as a dimension of
its own, so no operand is moved.

Both operands mapped: the two mapped axes pair up as a new leading batch dimension. One
operand mapped: its mapped axis is one more free dimension of that operand, and the result
has it where the free dimensions of that operand land (JAX's `_dot_general_batch_dim_nums`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lamina_core.interpreters import AxisData, BatchDim, batching_rules
from lamina_core.lax._batching_common import ndim_of
from lamina_core.lax._linalg import DimensionNumbers, dot_general, dot_general_p


def _bump(dims: Sequence[int], bdim: int) -> tuple[int, ...]:
    """`dims` of a per-example operand, renumbered for the operand mapped at `bdim`."""
    return tuple(int(d) + (int(d) >= bdim) for d in dims)


def batched_dimension_numbers(
    lhs_ndim: int, rhs_ndim: int, lbd: BatchDim, rbd: BatchDim, numbers: DimensionNumbers
) -> tuple[DimensionNumbers, int]:
    """The dimension numbers of `dot_general` over operands mapped at `lbd` and `rbd` (of
    ranks `lhs_ndim` and `rhs_ndim`, mapped axes included), and where the result's mapped
    axis is."""
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = numbers
    if lbd is not None and rbd is not None:
        new_lhs_batch = (lbd, *_bump(lhs_batch, lbd))
        new_rhs_batch = (rbd, *_bump(rhs_batch, rbd))
        contract = (_bump(lhs_contract, lbd), _bump(rhs_contract, rbd))
        return (contract, (new_lhs_batch, new_rhs_batch)), 0
    if lbd is not None:
        # The per-example lhs free dimensions before the mapped axis stay before it.
        free = [d for d in range(lhs_ndim) if d not in lhs_batch and d not in lhs_contract]
        out_dim = len(lhs_batch) + sum(1 for d in free if d < lbd)
        contract = (_bump(lhs_contract, lbd), tuple(rhs_contract))
        return (contract, (_bump(lhs_batch, lbd), tuple(rhs_batch))), out_dim
    assert rbd is not None
    free = [d for d in range(rhs_ndim) if d not in rhs_batch and d not in rhs_contract]
    # All of lhs's batch and free dimensions come first in the result.
    out_dim = lhs_ndim - len(lhs_contract) + sum(1 for d in free if d < rbd)
    contract = (tuple(lhs_contract), _bump(rhs_contract, rbd))
    return (contract, (tuple(lhs_batch), _bump(rhs_batch, rbd))), out_dim


@batching_rules.register(dot_general_p)
def _dot_general_batch(
    axis_data: AxisData,
    vals: Sequence[Any],
    dims: Sequence[BatchDim],
    *,
    dimension_numbers: DimensionNumbers,
    precision: Any,
    preferred_element_type: Any,
    out_sharding: Any,
) -> tuple[Any, int]:
    (lhs, rhs), (lbd, rbd) = vals, dims
    numbers, out_dim = batched_dimension_numbers(
        ndim_of(lhs), ndim_of(rhs), lbd, rbd, dimension_numbers
    )
    out = dot_general(
        lhs,
        rhs,
        numbers,
        precision=precision,
        preferred_element_type=preferred_element_type,
        out_sharding=out_sharding,
    )
    return out, out_dim


__all__ = ["batched_dimension_numbers"]
