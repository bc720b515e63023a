"""Effects: what an equation does besides computing its outputs.

Effect kinds are an open set (Refs define reads and writes, the runtime ordered effects):
each is an object of a subclass of `Effect`. A jaxpr's effects are a frozenset of them.
"""

from __future__ import annotations

from typing import Final, TypeAlias


class Effect:
    """Base class of effects; subclasses are immutable and hashable and define `__str__`."""

    __slots__ = ()


class KindEffect(Effect):
    """An effect that is only its kind: every instance of a subclass equals every other (the
    subclass defines `__str__`)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))


Effects: TypeAlias = frozenset[Effect]
no_effects: Final[Effects] = frozenset()
