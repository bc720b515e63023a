"""Batching rules of `bessel_i0e` and `bessel_i1e`: elementwise, the mapped axis stays put."""

from __future__ import annotations

from lamina_core.interpreters import batching_rules
from lamina_core.lax import _bessel as b
from lamina_core.lax import _elementwise_batching as _elementwise_batching
from lamina_core.lax._batching_common import defvectorized

for _prim in (b.bessel_i0e_p, b.bessel_i1e_p):
    # The elementwise family's module gives its rule to the unary primitives made before its
    # first import, these among them or not (imported above, after them, it is settled).
    if _prim not in batching_rules:
        defvectorized(_prim)
