"""`jax.ad`: the markers JAX's `VJP.with_refs` takes and returns for each input cotangent.

`with_refs(*markers)` on JAX's pullback says, per input, how its cotangent is wanted:
`GradValue()` as a returned value, `DontWant()` not at all (returned as `DidntWant()`), or an
array Ref to accumulate it into (returned as `GradRef()`). Lamina's pullbacks have no
`with_refs` yet, so these are the markers alone, with JAX's equality and pytree structure:
`DidntWant` and `GradRef` are pytree nodes with no leaves, `DontWant` and `GradValue` leaves.
"""

from __future__ import annotations

import dataclasses

from lamina import tree_util

__all__ = ["DidntWant", "DontWant", "GradRef", "GradValue"]


@dataclasses.dataclass(frozen=True, slots=True)
class GradValue:
    """Return this input's cotangent as a value (the default)."""


@tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, slots=True)
class GradRef:
    """In the result: this input's cotangent was accumulated into the Ref passed for it."""


@dataclasses.dataclass(frozen=True, slots=True)
class DontWant:
    """Do not compute this input's cotangent."""


@tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, slots=True)
class DidntWant:
    """In the result: this input's cotangent was not computed (it was a `DontWant`)."""
