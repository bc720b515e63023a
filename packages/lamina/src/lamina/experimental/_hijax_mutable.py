"""What `jax.experimental.hijax` has for mutable hi types, which Lamina does not implement:
enough for a library to define its classes at import (flax's `nnx` defines its hijax
`Variable` type at import, and uses it only when `flax_hijax_variable` is set), refused by
name when a value of such a type is traced.

- `MutableHiType`: the base class of mutable hi types (JAX's quasi-dynamic data); tracing a
  value of a subclass raises `NotImplementedError` naming it.
- `control_flow_allowed_effects`: the effect types allowed inside control flow. Lamina's
  control flow refuses no effect, so the set only records what libraries add.
"""

from __future__ import annotations

from typing import ClassVar, NoReturn

from lamina._effect_types import EffectTypeSet
from lamina_hijax import HiType

control_flow_allowed_effects: EffectTypeSet = EffectTypeSet()
"""Effect types allowed in `cond`, `while_loop` and `scan` bodies (all are, in Lamina)."""


class MutableHiType(HiType):
    """Base class of mutable hi types, whose values change type as they are updated (JAX's
    `MutableHiType`). Lamina does not implement them: lowering a value of one refuses."""

    has_qdd: ClassVar[bool] = True
    is_writer: ClassVar[bool] = False

    def lo_ty(self) -> NoReturn:
        raise NotImplementedError(
            f"Lamina does not implement mutable hi types (jax.experimental.hijax."
            f"MutableHiType): {type(self).__name__} cannot be traced"
        )
