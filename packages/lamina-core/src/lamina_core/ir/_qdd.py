"""Quasi-dynamic data: the part of a mutable hi value's type that changes as a program
updates it (what a box holds), tracked during tracing rather than written in the type.

A staged value of a mutable hi type has a `MutableQDD` cell; a primitive's abstract
evaluation sees the value as `AvalMutableQDD` and may update the cell (a box's `set`); a
primitive making a new value returns `AvalQDD` (its type and initial data). A jaxpr input
records its data on entry and at return (`Var.initial_qdd`/`final_qdd`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar


class MutableQDD:
    """The quasi-dynamic data of one staged value: `init_val` on entry, `cur_val` now."""

    __slots__ = ("cur_val", "init_val")

    def __init__(self, val: Any) -> None:
        self.init_val = val
        self.cur_val = val

    def update(self, val: Any) -> None:
        self.cur_val = val

    def __repr__(self) -> str:
        return f"MutableQuasiDynamicData(init_val={self.init_val}, cur_val={self.cur_val})"


@dataclass(frozen=True, slots=True)
class AvalQDD:
    """A type `aval` with its quasi-dynamic data `qdd` (immutable; `None` for none)."""

    aval: Any
    qdd: Any

    is_high: ClassVar[bool] = True
    has_qdd: ClassVar[bool] = True
    mutable: ClassVar[bool] = False

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


qdd_primitives: set[Any] = set()
"""The primitives whose abstract evaluation takes values of mutable hi types as
`AvalMutableQDD` (hi primitives, which may update them); others see the type alone."""


qdd_final_rules: dict[Any, Callable[[dict[str, Any], int], list[Any]]] = {}
"""For primitives holding jaxprs (calls, control flow) that may take mutable hi values:
`rule(params, n)` gives, for each of the `n` operands, the data the callee leaves it with
(None for an operand it does not update); staging updates the caller's values with it."""


def concrete_avals_qdd(avals: list[Any], values: Sequence[Any]) -> list[Any]:
    """`avals` (of the concrete `values`) with the mutable ones as cells of their values'
    current data, as a primitive applied eagerly checks them (updates are discarded: the
    primitive's rule on values updates the values themselves)."""
    return [
        AvalMutableQDD(a, MutableQDD(x.cur_qdd())) if a.has_qdd else a
        for a, x in zip(avals, values, strict=True)
    ]


__all__ = [
    "AvalMutableQDD",
    "AvalQDD",
    "MutableQDD",
    "concrete_avals_qdd",
    "qdd_final_rules",
    "qdd_primitives",
]
