"""Batching rules of `zeta` and `polygamma`: elementwise with broadcasting, an unbatched
operand broadcast against the batched one, as for the other binary elementwise primitives."""

from __future__ import annotations

from lamina_core.interpreters import batching_rules
from lamina_core.lax import _elementwise_batching as _elementwise_batching
from lamina_core.lax import _zeta as z
from lamina_core.lax._batching_common import defbroadcasting

for _prim in (z.zeta_p, z.polygamma_p):
    # The elementwise family's module gives its rule to the binary primitives made before its
    # first import, these among them or not (imported above, after them, it is settled).
    if _prim not in batching_rules:
        defbroadcasting(_prim)
