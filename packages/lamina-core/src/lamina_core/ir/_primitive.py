"""Primitives and the per-interpretation rule tables.

A primitive is an operation name with a binding convention; what it means under each
interpretation (abstract evaluation, the NumPy reference, differentiation, lowering, ...)
lives in that interpretation's `RuleTable`, owned by the layer that defines the
interpretation. Upper layers add rules by registering into lower layers' tables.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, TypeVar

RuleT = TypeVar("RuleT")


class MissingRuleError(NotImplementedError):
    """A primitive has no rule for the interpretation asked of it."""


class DuplicateRuleError(ValueError):
    """A second rule was registered for the same primitive and interpretation."""


class InvalidValueError(TypeError):
    """A value that no type of the IR describes, met by tracing. The innermost `bind` that was
    given the value names itself and the value's position, as JAX's message does."""

    def __init__(self, value: object) -> None:
        super().__init__(f"Value {value!r} of type {type(value)} is not a valid Lamina (JAX) type")
        self.value = value

    def at(self, prim: Primitive, args: tuple[Any, ...]) -> TypeError:
        position = next((i for i, a in enumerate(args) if a is self.value), None)
        if position is None:  # met inside the rule of `prim`: an outer bind may name it
            return self
        return TypeError(
            f"Error interpreting argument to {prim} as a JAX value. The problematic value is "
            f"of type {type(self.value)} and was passed to {prim} at position {position}.\n"
        )


class Primitive:
    """An operation of the IR. Identity is intended: each primitive object is unique."""

    __slots__ = ("multiple_results", "name")

    def __init__(self, name: str, *, multiple_results: bool = False) -> None:
        self.name = name
        self.multiple_results = multiple_results
        _BY_NAME.setdefault(name, []).append(self)

    def bind(self, *args: Any, **params: Any) -> Any:
        """Apply the primitive under the current trace (eager, staging, or a transformation)."""
        try:
            return _current_trace_hook().process_primitive(self, args, params)
        except InvalidValueError as err:
            raise err.at(self, args) from err

    def __repr__(self) -> str:
        return self.name


_BY_NAME: dict[str, list[Primitive]] = {}
"""Every primitive made, by name, in order of creation: how a printed jaxpr is read back.
Names may repeat (tests and upper layers make their own), hence the lists."""


def primitives_named(name: str) -> list[Primitive]:
    """The primitives called `name`, oldest first (empty if none was made)."""
    return list(_BY_NAME.get(name, ()))


def _no_trace_machinery() -> Any:
    raise RuntimeError("lamina_core.trace._tracing was not imported; import lamina_core")


_current_trace_hook: Callable[[], Any] = _no_trace_machinery


def install_current_trace(getter: Callable[[], Any]) -> None:
    """Called once by `lamina_core.trace._tracing` at import: how `bind` finds the current trace."""
    global _current_trace_hook
    _current_trace_hook = getter


class RuleTable(Generic[RuleT]):
    """Rules for one interpretation, keyed by primitive. Owned by that interpretation's layer."""

    def __init__(self, interpretation: str) -> None:
        self.interpretation = interpretation
        self._rules: dict[Primitive, RuleT] = {}

    def register(self, prim: Primitive) -> Callable[[RuleT], RuleT]:
        """Decorator: `@table.register(add_p)` over the rule function."""

        def deco(rule: RuleT) -> RuleT:
            self.set(prim, rule)
            return rule

        return deco

    def set(self, prim: Primitive, rule: RuleT) -> None:
        if prim in self._rules:
            raise DuplicateRuleError(
                f"a {self.interpretation} rule for primitive '{prim.name}' is already registered"
            )
        self._rules[prim] = rule

    def replace(self, prim: Primitive, rule: RuleT) -> None:
        """Register `rule` for `prim`, replacing any rule it has: JAX's rule tables are plain
        dicts that users assign into (`ad.primitive_jvps[p] = rule`), so a second assignment
        wins there; `set` stays the strict form for Lamina's own registrations."""
        self._rules[prim] = rule

    def remove(self, prim: Primitive) -> None:
        """Forget `prim`'s rule (`del` on JAX's dict tables); KeyError if it has none."""
        del self._rules[prim]

    def __getitem__(self, prim: Primitive) -> RuleT:
        try:
            return self._rules[prim]
        except KeyError:
            raise MissingRuleError(
                f"no {self.interpretation} rule for primitive '{prim.name}'; is the package "
                f"that defines it installed and imported?"
            ) from None

    def get(self, prim: Primitive) -> RuleT | None:
        return self._rules.get(prim)

    @property
    def rules(self) -> Mapping[Primitive, RuleT]:
        """The rules by primitive, live (later registrations show): for an interpreter's hot
        path, where a dict lookup saves the method call of `get`."""
        return self._rules

    def __contains__(self, prim: object) -> bool:
        return prim in self._rules

    def __iter__(self) -> Iterator[Primitive]:
        return iter(self._rules)

    def __len__(self) -> int:
        return len(self._rules)
