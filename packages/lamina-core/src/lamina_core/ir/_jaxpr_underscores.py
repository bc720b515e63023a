"""Which binder a `_` in jaxpr text names, where a jaxpr binds several.

The printer names a callee's binders like the caller's atoms they alias (JAX's jit bodies),
so each binder aliasing a dropped output of the caller prints `_`: one jaxpr may bind several
`_` and read them, as outputs (`in (_, _)`) or operands (`div 0.5:f32[] _`). The text does
not say which is which; the types do. An output `_` is the first `_` binder not read yet with
the type the calling equation gives that output; an operand `_` is the last one bound, or
else the first other choice under which its equation type-checks. A `_` binder never read is
a dropped output (`DropVar`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Final

from lamina_core.ir._avals import AbstractValue
from lamina_core.ir._jaxpr import Atom, Var

MAX_CHOICES: Final = 256
"""Operand choices tried for one equation before its type error is reported."""


class Underscores:
    """The `_` binders of the jaxprs being read, innermost last."""

    def __init__(self) -> None:
        self.unread: list[dict[int, Var]] = []
        """Per jaxpr, the `_` binders nothing has read yet, in binding order."""
        self.bound: list[list[Var]] = []

    def enter(self) -> None:
        self.unread.append({})
        self.bound.append([])

    def leave(self) -> dict[int, Var]:
        """Leave a jaxpr: its `_` binders never read, by id (its dropped outputs)."""
        self.bound.pop()
        return self.unread.pop()

    def bind(self, var: Var) -> None:
        self.unread[-1][id(var)] = var
        self.bound[-1].append(var)

    def read(self, atoms: Sequence[Atom]) -> None:
        unread = self.unread[-1]
        if unread:
            for a in atoms:
                unread.pop(id(a), None)

    def output(self, k: int, expected: Sequence[AbstractValue] | None, last: Var) -> Var:
        """The binder an output `_` at position `k` names: the first unread `_` binder of the
        type the caller expects there (of any type without `expected`), else the first of
        that type read already, else `last`."""
        unread = self.unread[-1]
        want = expected[k] if expected is not None and k < len(expected) else None
        for var in unread.values():
            if want is None or var.aval == want:
                del unread[id(var)]
                return var
        return next((v for v in self.bound[-1] if v.aval == want), last)

    def choices(self, operands: Sequence[Atom], at: Sequence[int]) -> Iterator[list[Atom]]:
        """`operands` with the `_` at positions `at` naming other `_` binders of the jaxpr,
        the most recently bound first (the first choice, every `_` the last one bound, is
        the operands as read)."""
        latest_first = self.bound[-1][::-1]
        combos = itertools.product(latest_first, repeat=len(at))
        for combo in itertools.islice(combos, 1, MAX_CHOICES):
            alt = list(operands)
            for position, var in zip(at, combo, strict=True):
                alt[position] = var
            yield alt
