"""A rule table seen as a dict: how JAX's public rule dicts map onto Lamina's tables.

JAX publishes several rule tables as plain dicts keyed by primitive (`ad.primitive_jvps`,
`ad.primitive_transposes`, `batching.fancy_primitive_batchers`, ...) that users read and assign
into. A `RuleMapping` is such a dict over one of Lamina's `RuleTable`s: reading gives the
table's rule, assigning registers (replacing, as a dict does), `del` forgets. Where JAX's rule
takes other arguments than Lamina's, `adapt` turns an assigned rule into Lamina's form; the
mapping then remembers the rule as assigned, so reading it back gives the same object.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from typing import Any, Generic, TypeVar

from lamina_core.ir._primitive import Primitive, RuleTable

RuleT = TypeVar("RuleT")


class RuleMapping(MutableMapping[Primitive, Any], Generic[RuleT]):
    """`table` as a dict keyed by primitive. Identity is intended: it is a view of `table`."""

    def __init__(
        self, table: RuleTable[RuleT], adapt: Callable[[Primitive, Any], RuleT] | None = None
    ) -> None:
        self.table = table
        self._adapt = adapt
        self._assigned: dict[Primitive, tuple[Any, RuleT]] = {}
        """Rules assigned through this mapping (as given, as registered), when adapted."""

    def __getitem__(self, prim: Primitive) -> Any:
        rule = self.table.get(prim)
        if rule is None:
            raise KeyError(prim)
        given = self._assigned.get(prim)
        if given is not None and given[1] is rule:
            return given[0]
        return rule

    def __setitem__(self, prim: Primitive, rule: Any) -> None:
        if not isinstance(prim, Primitive):
            raise TypeError(
                f"{self.table.interpretation} rules are keyed by primitive; got "
                f"{type(prim).__name__} {prim!r}"
            )
        if self._adapt is None:
            self.table.replace(prim, rule)
            return
        adapted = self._adapt(prim, rule)
        self.table.replace(prim, adapted)
        self._assigned[prim] = (rule, adapted)

    def __delitem__(self, prim: Primitive) -> None:
        if prim not in self.table:
            raise KeyError(prim)
        self.table.remove(prim)
        self._assigned.pop(prim, None)

    def __iter__(self) -> Iterator[Primitive]:
        return iter(list(self.table))

    def __len__(self) -> int:
        return len(self.table)

    def __contains__(self, prim: object) -> bool:
        return prim in self.table

    def __repr__(self) -> str:
        return f"<{self.table.interpretation} rules of {len(self)} primitives>"
