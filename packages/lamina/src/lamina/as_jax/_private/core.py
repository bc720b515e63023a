"""`jax._src.core` under `lamina.as_jax`: what libraries take from it, mapped onto Lamina's
core. flax's `linen.fp8_ops` reads `ShapedArray` and `physical_aval` (its fp8 meta dtype's
rules describe their physical values with them); numpyro asks `trace_state_clean` whether a
transformation is running (it caches functions only outside one). Everything else of JAX's
core is `jax.core` and `jax.extend.core`, Lamina's public modules."""

from __future__ import annotations

from lamina_core.ir import ShapedArray, physical_aval
from lamina_core.trace import EvalTrace, bound_axes, current_trace

__all__ = ["ShapedArray", "physical_aval", "trace_state_clean"]


def trace_state_clean() -> bool:
    """Whether nothing is being traced: operations run eagerly and no named axis is bound."""
    return isinstance(current_trace(), EvalTrace) and not bound_axes()
