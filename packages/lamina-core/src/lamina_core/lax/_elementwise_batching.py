"""Batching rules of the elementwise and reduction families (JAX's `defvectorized`,
`defbroadcasting` and `defreducer` classes): one operand keeps its mapped axis where it is,
broadcasting operands align theirs, reductions keep it out of the reduced axes; and the rule
of `add_any`, the sum of tangents."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lamina_core.interpreters import AxisData, BatchDim, add_any_p, batching_rules
from lamina_core.lax import _reductions as r
from lamina_core.lax._batching_common import (
    broadcast_batched,
    defbroadcasting,
    defreducer,
    defvectorized,
    moveaxis,
    shape_of,
)
from lamina_core.lax._nary import binary_primitives, unary_primitives
from lamina_core.lax._selection import bitcast_convert_type_p, reduce_precision_p
from lamina_core.lax._structural import convert_element_type_p

for _prim in unary_primitives:
    defvectorized(_prim)
for _prim in binary_primitives:
    defbroadcasting(_prim)
for _prim in (convert_element_type_p, bitcast_convert_type_p, reduce_precision_p):
    defvectorized(_prim)
for _prim in (
    r.reduce_sum_p, r.reduce_prod_p, r.reduce_max_p, r.reduce_min_p, r.reduce_and_p,
    r.reduce_or_p, r.reduce_xor_p, r.argmax_p, r.argmin_p,
):  # fmt: skip
    defreducer(_prim)


def _add_any_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim]
) -> tuple[Any, BatchDim]:
    # Tangent sums align the operands' mapped axes where the mapped one already is (JAX's
    # `add_batched`): no move to the front, unlike `add`.
    (x, y), (dx, dy) = vals, dims
    if dx == dy:
        return add_any_p.bind(x, y), dx
    if dx is None:
        assert dy is not None
        return add_any_p.bind(broadcast_batched(x, shape_of(y)[dy], dy), y), dy
    if dy is None:
        return add_any_p.bind(x, broadcast_batched(y, shape_of(x)[dx], dx)), dx
    return add_any_p.bind(moveaxis(x, dx, dy), y), dy


batching_rules.set(add_any_p, _add_any_batch)
