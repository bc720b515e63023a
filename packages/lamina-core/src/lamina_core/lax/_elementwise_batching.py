"""Batching rules of the elementwise and reduction families (JAX's `defvectorized`,
`defbroadcasting` and `defreducer` classes): one operand keeps its mapped axis where it is,
broadcasting operands align theirs, reductions keep it out of the reduced axes."""

from __future__ import annotations

from lamina_core.lax import _reductions as r
from lamina_core.lax._batching_common import defbroadcasting, defreducer, defvectorized
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
