"""Batching rules of the incomplete gamma and beta primitives: elementwise with broadcasting,
an unbatched operand broadcast against the batched ones."""

from __future__ import annotations

from lamina_core.interpreters import batching_rules
from lamina_core.lax import _elementwise_batching as _elementwise_batching
from lamina_core.lax import _igamma as ig
from lamina_core.lax._batching_common import defbroadcasting

for _prim in (ig.igamma_p, ig.igammac_p, ig.igamma_grad_a_p, ig.regularized_incomplete_beta_p):
    # The elementwise family's module gives its rule to the binary primitives made before its
    # first import (imported above, after them, it is settled).
    if _prim not in batching_rules:
        defbroadcasting(_prim)
