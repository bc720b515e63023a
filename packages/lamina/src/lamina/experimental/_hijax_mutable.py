"""What `jax.experimental.hijax` has for mutable hi types (JAX's quasi-dynamic data).

- `MutableHiType`: the base class of mutable hi types, whose values (a box, a log) change
  as a program updates them. A subclass says how a value is made of arrays given its data
  (`lo_ty_qdd`, `new_from_loval`, `read_loval`, `update_from_loval`); its primitives are
  `HiPrimitive`s whose abstract evaluation reads and updates the data (`AvalMutableQDD`) or
  gives a new value's (`AvalQDD`). `jax.experimental.cur_qdd(x)` is a value's data now.
- `AvalQDD`, `AvalMutableQDD`: a type with its quasi-dynamic data, immutable or as a cell.
- `control_flow_allowed_effects`: the effect types allowed inside control flow. Lamina's
  control flow refuses no effect, so the set only records what libraries add.
"""

from __future__ import annotations

from typing import Any, ClassVar, NoReturn

from lamina._effect_types import EffectTypeSet
from lamina_core.ir import AvalMutableQDD, AvalQDD
from lamina_hijax import HiType

control_flow_allowed_effects: EffectTypeSet = EffectTypeSet()
"""Effect types allowed in `cond`, `while_loop` and `scan` bodies (all are, in Lamina)."""


class MutableHiType(HiType):
    """Base class of mutable hi types, whose values change type as they are updated (JAX's
    `MutableHiType`): their arrays depend on their quasi-dynamic data (`lo_ty_qdd`)."""

    has_qdd: ClassVar[bool] = True
    is_writer: ClassVar[bool] = False

    def lo_ty(self) -> NoReturn:
        raise TypeError("mutable hitypes should use lo_ty_qdd instead")

    # JAX's protocol (what `AvalQDD` delegates to): a subclass defines `lo_ty_qdd`,
    # `new_from_loval`, `read_loval` and `update_from_loval`; these default as JAX's do.
    def read_loval_in(self, state: Any, val: Any, /) -> Any:
        return self.read_loval(state, val)  # type: ignore[attr-defined]  # the subclass's

    def read_loval_out(self, state: Any, val: Any, /) -> Any:
        return self.read_loval(state, val)  # type: ignore[attr-defined]  # the subclass's

    def update_from_loval2(self, state: Any, val: Any, lo_vals: Any, /) -> None:
        self.update_from_loval(state, val, *lo_vals.unflatten())  # type: ignore[attr-defined]


__all__ = ["AvalMutableQDD", "AvalQDD", "MutableHiType", "control_flow_allowed_effects"]
