"""What the equation reader of `parse` need not work out twice in one text.

Programs repeat themselves: the same primitive with the same params on operands of the same
types, layer after layer. Reading params and checking an equation (decoding the params,
effects, abstract evaluation) cost more than the rest of reading it, and depend on nothing but
the params' text, the operands' and results' types and the context the jaxpr is read in. So
an equation whose params text and types (the same type objects: a parse makes one per type
text) were seen before in the same jaxpr takes the outcome of the first: its printed types
are the very ones the first was checked against (a mismatch stops the parse). Params holding
a jaxpr or an elided constant read into new objects each time, so their equations are read
in full.
"""

from __future__ import annotations

from typing import Any, Final, TypeAlias

from lamina_core.ir._avals import AbstractValue
from lamina_core.ir._effects import Effects
from lamina_core.ir._jaxpr import Atom
from lamina_core.ir._jaxpr_lex import Token, TokenReader
from lamina_core.ir._primitive import Primitive, primitives_named
from lamina_core.ir._rules import impl_rules, value_impl_rules

_READ_ANEW: Final = frozenset({"{", "elided", "end"})

Checked: TypeAlias = tuple[dict[str, Any], Effects, list[AbstractValue] | None]
"""An equation's params decoded, its effects and its result types (None: no rule)."""


class SeenEquations(TokenReader):
    """The primitives found by name, and the equations checked, so far (per jaxpr)."""

    prims: dict[tuple[str, bool], Primitive]
    seen: dict[tuple[Any, ...], tuple[Checked, tuple[AbstractValue, ...]]]
    """By primitive, params text and the ids of the operand and result types: the outcome,
    and the types (held so that their ids are not reused)."""

    def primitive(self, tok: Token, n_out: int) -> Primitive:
        known = self.prims.get((tok.text, n_out == 1))  # a few names, each used many times
        if known is not None:
            return known
        found = primitives_named(tok.text)
        if not found:
            raise self.error(
                f"unknown primitive '{tok.text}' (is the package defining it imported?)", tok
            )
        if len(found) > 1:
            runnable = [p for p in found if p in impl_rules or p in value_impl_rules]
            found = runnable or found
            if n_out != 1:
                found = [p for p in found if p.multiple_results] or found
        if len(found) > 1:
            raise self.error(f"ambiguous primitive name '{tok.text}': {len(found)} share it", tok)
        self.prims[tok.text, n_out == 1] = found[0]
        return found[0]

    def params_text(self) -> str | None:
        """With the cursor on the `[` of params: their text, the cursor moved past them, if
        the text alone makes them (no jaxpr, no elided constant); else None, cursor kept."""
        tokens, depth = self.tokens, 0
        for k in range(self.i, len(tokens)):
            kind = tokens[k].kind
            if kind == "[":
                depth += 1
            elif kind == "]":
                depth -= 1
                if depth == 0:
                    start, self.i = tokens[self.i].pos, k + 1
                    return self.text[start : tokens[k].pos]
            elif kind in _READ_ANEW:
                return None
        return None

    def recall(
        self, prim: Primitive, params: str | None, invars: list[Atom], outs: list[AbstractValue]
    ) -> tuple[tuple[Any, ...] | None, Checked | None]:
        """The key of an equation (None: its params text, if None, does not make its params),
        and the outcome of the one seen before with that key, with params of its own; no
        result types to check, as these very types matched them then (or parsing stopped)."""
        if params is None:
            return None, None
        key = (prim, params, len(invars), *[id(a.aval) for a in invars], *map(id, outs))
        seen = self.seen.get(key)
        if seen is None:
            return key, None
        decoded, effects, _ = seen[0]
        return key, (dict(decoded), effects, None)

    def remember(
        self, key: tuple[Any, ...], got: Checked, invars: list[Atom], outs: list[AbstractValue]
    ) -> None:
        self.seen[key] = (got, (*[a.aval for a in invars], *outs))
