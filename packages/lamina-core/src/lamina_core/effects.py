"""Effects: what an equation does besides computing its outputs.

Effect kinds are an open set (Refs define reads and writes, the runtime ordered effects):
each is an object of a subclass of `Effect`. A jaxpr's effects are a frozenset of them.
"""

from __future__ import annotations

from typing import Final, TypeAlias


class Effect:
    """Base class of effects; subclasses are immutable and hashable and define `__str__`."""

    __slots__ = ()


Effects: TypeAlias = frozenset[Effect]
no_effects: Final[Effects] = frozenset()
