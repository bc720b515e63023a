"""What `jax.experimental.hijax` has for mutable hi types, which Lamina does not implement:
enough for a library to define its classes at import (flax's `nnx` defines its hijax
`Variable` type at import, and uses it only when `flax_hijax_variable` is set), refused by
name when a value of such a type is traced.

- `MutableHiType`: the base class of mutable hi types (JAX's quasi-dynamic data); tracing a
  value of a subclass raises `NotImplementedError` naming it.
- `AvalQDD`, `AvalMutableQDD`: a type with its quasi-dynamic data (the state of a mutable hi
  value at one point of a program, e.g. what a box holds), as JAX's core pairs them: an
  immutable `qdd` (what abstract evaluation returns for a new value) or a mutable one (what an
  operation on the value updates). Lamina's tracing carries no quasi-dynamic data, so nothing
  produces them; they delegate to their type's protocol as JAX's do.
- `control_flow_allowed_effects`: the effect types allowed inside control flow. Lamina's
  control flow refuses no effect, so the set only records what libraries add.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, NoReturn

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

    # JAX's protocol (what `AvalQDD` delegates to): a subclass defines `lo_ty_qdd`,
    # `new_from_loval`, `read_loval` and `update_from_loval`; these default as JAX's do.
    def read_loval_in(self, state: Any, val: Any, /) -> Any:
        return self.read_loval(state, val)  # type: ignore[attr-defined]  # the subclass's

    def update_from_loval2(self, state: Any, val: Any, lo_vals: Any, /) -> None:
        self.update_from_loval(state, val, *lo_vals.unflatten())  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class AvalQDD:
    """A type `aval` with its quasi-dynamic data `qdd` (immutable; `None` for none)."""

    aval: Any
    qdd: Any

    is_high: ClassVar[bool] = True
    has_qdd: ClassVar[bool] = True

    @property
    def is_writer(self) -> bool:
        return bool(self.aval.is_writer)

    def lo_ty(self) -> Any:
        return self.aval.lo_ty_qdd(self.qdd)

    def read_loval(self, val: Any) -> Any:
        return self.aval.read_loval(self.qdd, val)

    def read_loval_in(self, val: Any) -> Any:
        return self.aval.read_loval_in(self.qdd, val)

    def read_loval_out(self, val: Any) -> Any:
        return self.aval.read_loval_out(self.qdd, val)

    def new_from_loval(self, *lovals: Any) -> Any:
        return self.aval.new_from_loval(self.qdd, *lovals)

    def to_tangent_aval(self) -> AvalQDD:
        return AvalQDD(self.aval.to_tangent_aval(), self.qdd and self.qdd.to_tangent_qdd())


@dataclass(frozen=True, slots=True)
class AvalMutableQDD:
    """A type `aval` with its quasi-dynamic data as a mutable cell (`mutable_qdd.update(...)`
    changes it), as an operation's abstract evaluation receives it."""

    aval: Any
    mutable_qdd: Any
