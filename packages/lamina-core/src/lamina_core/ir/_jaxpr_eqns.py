"""Equations of printed jaxpr text read back: `outs = prim[params] operands`, checked.

An equation's primitive is found by name, its params decoded (`_jaxpr_decoders`) and its
operands' types run through the primitive's rules, which must give the types the text says;
an equation printed in a registered form of its own is read by that form's reader
(`_jaxpr_forms`). The parser (`_jaxpr_io`) reads the programs, jaxprs and params around them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core.ir import dtypes
from lamina_core.ir._avals import AbstractValue, types_match
from lamina_core.ir._effects import Effects, no_effects
from lamina_core.ir._jaxpr import Atom, JaxprEqn, Literal, Var
from lamina_core.ir._jaxpr_decoders import param_decoders, result_types
from lamina_core.ir._jaxpr_forms import custom_form, read_custom_eqn
from lamina_core.ir._jaxpr_lex import LITERAL_WORDS, Token
from lamina_core.ir._jaxpr_seen import Checked, SeenEquations
from lamina_core.ir._jaxpr_types import TypeReading
from lamina_core.ir._jaxpr_underscores import Underscores
from lamina_core.ir._literals import typed_scalar
from lamina_core.ir._primitive import Primitive
from lamina_core.ir._rules import abstract_eval_rules, effects_rules


class EqnReading(TypeReading, SeenEquations):
    """Reading the equation at the cursor, its operands and the elided constants they take
    (the parser reads the binders and params)."""

    consts: Sequence[Any] | None
    used: int
    """How many of `consts` the text has taken so far."""
    forms: bool
    """Whether the text holds a marker of an equation form (else no line is looked at)."""
    underscores: Underscores
    out_hint: list[AbstractValue] | None

    def binders(
        self, scope: dict[str, Var], stop: str, taken: dict[str, Var] | None = None
    ) -> list[Var]:
        raise NotImplementedError

    def params(self, prim: str) -> dict[str, Any]:
        raise NotImplementedError

    def next_const(self, what: str, tok: Token) -> Any:
        if self.consts is None or self.used >= len(self.consts):
            have = 0 if self.consts is None else len(self.consts)
            raise self.error(
                f"no value for {what}, elided constant number {self.used + 1} in print order "
                f"(consts has {have}); pass them as `consts` (see `elided_constants`)",
                tok,
            )
        value = self.consts[self.used]
        self.used += 1
        return value

    def eqn(self, scope: dict[str, Var]) -> JaxprEqn:
        tokens = self.tokens
        first = tokens[self.i]
        if self.forms:  # the text has a form an upper layer prints (`b:f32[] <- a[1]`)
            marker = custom_form(self.text, first.pos)
            if marker is not None:
                return read_custom_eqn(self, scope, first, marker)
        outvars: list[Var] = []
        binders = scope
        if first.kind == "name" and tokens[self.i + 1].kind == ":":
            # An equation's outputs are bound after its operands are read.
            binders = {}
            outvars = self.binders(binders, "=", taken=scope)
            self.i += 1
        prim_tok = self.expect("name", "a primitive's name")
        params: dict[str, Any] = {}
        out_avals = [v.aval for v in outvars]
        opening = self.i
        text: str | None = ""  # the params' text, when it alone makes them (else None)
        if tokens[opening].kind == "[" and not tokens[opening].spaced:
            text = self.params_text()
            if text is None:
                self.i += 1
                self.out_hint = out_avals
                params = self.params(prim_tok.text)
        invars: list[Atom] = []
        at = []  # operands printed `_`: which binder each names may take the types to decide
        while not self.eqn_ends(first):
            if tokens[self.i].text == "_":
                at.append(len(invars))
            invars.append(self.atom(scope))
        prim = self.primitive(prim_tok, len(outvars))
        got: Checked | Exception | None
        key, got = self.recall(prim, None if at else text, invars, out_avals)
        if got is None:
            if text:  # params passed over, being new: read them now
                cursor, self.i, self.out_hint = self.i, opening + 1, out_avals
                params, self.i = self.params(prim_tok.text), cursor
            got = self.checked(prim, params, invars, out_avals)
            if key is not None and not isinstance(got, Exception):
                self.remember(key, got, invars, out_avals)
        if at and (isinstance(got, Exception) or not _matches(got[2], out_avals)):
            for alt in self.underscores.choices(invars, at):
                again = self.checked(prim, params, alt, out_avals)
                if not isinstance(again, Exception) and _matches(again[2], out_avals):
                    invars, got = alt, again
                    break
        if isinstance(got, Exception):  # a rule's complaint about what the text says
            raise self.error(f"bad equation for '{prim.name}': {got}", prim_tok) from got
        params, effects, typed = got
        self.underscores.read(invars)
        if not _matches(typed, out_avals):
            assert typed is not None
            said = " ".join(a.str_short(True) for a in out_avals) or "no outputs"
            made = " ".join(a.str_short(True) for a in typed) or "no outputs"
            raise self.error(
                f"type mismatch: '{prim.name}' of these operands gives {made}, the text says "
                f"{said}",
                first,
            )
        if binders is not scope:
            scope.update(binders)
        return JaxprEqn(tuple(invars), tuple(outvars), prim, params, effects)

    def checked(
        self, prim: Primitive, params: dict[str, Any], invars: list[Atom], outs: list[AbstractValue]
    ) -> tuple[dict[str, Any], Effects, list[AbstractValue] | None] | Exception:
        """The equation's params decoded, its effects and result types; or what its rules
        object to."""
        in_avals = [a.aval for a in invars]
        try:
            decoder = param_decoders.get(prim.name)
            if decoder is not None:
                params = decoder(params, in_avals, outs)
            rule = effects_rules.get(prim)
            effects = no_effects if rule is None else rule(*in_avals, **params)
            return params, effects, self.result_types(prim, in_avals, params)
        except Exception as e:
            return e

    @staticmethod
    def result_types(
        prim: Primitive, in_avals: list[AbstractValue], params: dict[str, Any]
    ) -> list[AbstractValue] | None:
        """What the primitive's abstract evaluation makes of the operands (None: no rule)."""
        rule = abstract_eval_rules.get(prim)
        if rule is None:
            return None
        try:
            typing = result_types[0] if result_types else None
            out = typing(prim, in_avals, params) if typing else rule(*in_avals, **params)
        except NameError:
            # An axis name bound by an enclosing shard_map or vmap the text does not show
            # here: no type to check against.
            return None
        return [out] if isinstance(out, AbstractValue) else list(out)

    def atom(self, scope: dict[str, Var]) -> Var | Literal:
        tok = self.tokens[self.i]
        if tok.kind == "name" and (
            tok.text not in LITERAL_WORDS or self.tokens[self.i + 1].kind != ":"
        ):
            var = scope.get(tok.text)
            if var is None:
                raise self.error(f"unbound variable '{tok.text}'", tok)
            self.i += 1
            return var
        if tok.kind == "elided":
            self.i += 1
            self.expect(":", "':' and the constant's type")
            aval = self.array_type()
            value = self.next_const(f"[...]:{aval.str_short(True)}", tok)
            if tuple(np.shape(value)) != aval.shape:
                raise self.error(
                    f"the value given for [...]:{aval.str_short(True)} has shape {np.shape(value)}",
                    tok,
                )
            return Literal(value, aval)
        number = self.scalar()
        parenthesized = None
        if number is None and tok.kind == "(":
            parenthesized = self.parenthesized()
        elif number is None:
            raise self.error(f"expected a variable or a literal, found {self.found()}")
        self.expect(":", "':' and the literal's type")
        aval = self.array_type()
        if aval.shape:
            raise self.error("a literal printed in full is a scalar: expected a [] type", tok)
        if parenthesized is not None:
            if aval.dtype == dtypes.float0:  # a zero tangent prints as `(b'',):float0[]`
                return Literal(np.zeros((), dtypes.float0), aval)
            try:
                number = complex(parenthesized)
            except ValueError:
                raise self.error("expected a complex number such as (1+2j)", tok) from None
        assert number is not None  # read by `scalar` or from the parentheses
        val: Any = bool(number) if aval.dtype.kind == "b" else typed_scalar(number, aval.dtype)
        return Literal(val, aval)

    def parenthesized(self) -> str:
        """The text from the `(` at the cursor to its `)` on the same line: `(1+2j)`."""
        start = self.tok
        while self.tok.kind not in (")", "end") and self.tok.line_col < 0:
            self.i += 1
        close = self.expect(")", "')' closing a complex number")
        return self.text[start.pos : close.pos + 1]


def _matches(typed: list[AbstractValue] | None, outs: list[AbstractValue]) -> bool:
    return typed is None or (len(typed) == len(outs) and all(map(types_match, typed, outs)))
