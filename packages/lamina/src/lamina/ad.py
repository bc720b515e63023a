"""`jax.ad`: the markers JAX's `VJP.with_refs` takes and returns for each input cotangent.

`with_refs(*markers)` on JAX's pullback says, per input, how its cotangent is wanted:
`GradValue()` as a returned value, `DontWant()` not at all (returned as `DidntWant()`), or an
array Ref to accumulate it into (returned as `GradRef()`). The markers have JAX's equality and
pytree structure: `DidntWant` and `GradRef` are pytree nodes with no leaves, `DontWant` and
`GradValue` leaves. They live in `lamina_core.transforms`, whose pullbacks take them.
"""

from __future__ import annotations

from lamina_core.transforms import DidntWant, DontWant, GradRef, GradValue

__all__ = ["DidntWant", "DontWant", "GradRef", "GradValue"]
