"""`jaxpr_const_args`: the hoisted constants of a jaxpr and its sub-jaxprs, each once.

Constants are made unique by the identity of their value, so one array used twice is one
const arg (JAX 0.10.2 makes one per use at the top level). The result is memoized per jaxpr
object in a weak-keyed table: it lives as long as the jaxpr and keeps nothing alive that the
jaxpr does not already hold. A sub-jaxpr's const args are a subset of its parent's.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from lamina_consts.policy import embedded_constants_max_bytes, is_hoistable, nbytes
from lamina_core.ir import AbstractValue, ClosedJaxpr, Jaxpr, Literal, jaxprs_in_params


@dataclass(frozen=True, slots=True, eq=False)
class ConstArgs:
    """The typed plan the lowering and the runtime consume: one entry per const arg.

    Identity semantics (eq=False): the values are arrays, which have no useful equality.
    """

    values: tuple[Any, ...]
    """The constant values, in argument order (first use in the jaxpr)."""
    avals: tuple[AbstractValue, ...]
    shardings: tuple[Any, ...] | None = None
    """Filled by the runtime (one per value) when it places the constants on devices."""
    layouts: tuple[Any, ...] | None = None
    _index: dict[int, int] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(self.values) != len(self.avals):
            raise ValueError(f"ConstArgs: {len(self.values)} values but {len(self.avals)} avals")
        for name, extra in (("shardings", self.shardings), ("layouts", self.layouts)):
            if extra is not None and len(extra) != len(self.values):
                raise ValueError(f"ConstArgs: {len(extra)} {name} for {len(self.values)} values")
        self._index.update((id(v), i) for i, v in enumerate(self.values))

    def __len__(self) -> int:
        return len(self.values)

    def __iter__(self) -> Iterator[tuple[Any, AbstractValue]]:
        return iter(zip(self.values, self.avals, strict=True))

    def index(self, value: Any) -> int | None:
        """The argument position of `value` (by identity), or None if it is not a const arg."""
        return self._index.get(id(value))

    def with_placement(
        self, shardings: Sequence[Any] | None, layouts: Sequence[Any] | None = None
    ) -> ConstArgs:
        return ConstArgs(
            self.values,
            self.avals,
            None if shardings is None else tuple(shardings),
            None if layouts is None else tuple(layouts),
        )

    @property
    def nbytes(self) -> int:
        return sum(nbytes(v) for v in self.values)


EMPTY: ConstArgs = ConstArgs((), ())

_memo: weakref.WeakKeyDictionary[Jaxpr, tuple[int, ConstArgs]] = weakref.WeakKeyDictionary()
"""Per-jaxpr results, keyed weakly; the int is the size threshold they were computed under."""


def _literals(jaxpr: Jaxpr) -> Iterator[Literal]:
    for atom in jaxpr.outvars:
        if isinstance(atom, Literal):
            yield atom
    for eqn in jaxpr.eqns:
        for atom in eqn.invars:
            if isinstance(atom, Literal):
                yield atom
        for sub in jaxprs_in_params(eqn.params):
            for value, aval in jaxpr_const_args(sub):
                yield Literal(value, aval)


def jaxpr_const_args(jaxpr: Jaxpr | ClosedJaxpr) -> ConstArgs:
    """The const args of `jaxpr` (sub-jaxprs included), unique by value identity."""
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    threshold = embedded_constants_max_bytes.value
    known = _memo.get(jaxpr)
    if known is not None and known[0] == threshold:
        return known[1]
    seen: dict[int, tuple[Any, AbstractValue]] = {}
    for literal in _literals(jaxpr):
        if id(literal.val) not in seen and is_hoistable(literal):
            seen[id(literal.val)] = (literal.val, literal.aval)
    result = ConstArgs(tuple(v for v, _ in seen.values()), tuple(a for _, a in seen.values()))
    _memo[jaxpr] = (threshold, result)
    return result
