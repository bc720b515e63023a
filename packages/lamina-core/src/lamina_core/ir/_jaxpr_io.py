"""Jaxprs read back from the text the printer makes: `parse`.

The text leaves out what a program needs besides its structure: the values of elided array
constants (`[...]:f32[16]`) and of the top-level constvars, which `consts` supplies in print
order, and the params a primitive's print rule hides, which its decoder restores
(`_jaxpr_decoders`; `elided_constants` in `_jaxpr_elided` lists the values). Tokens and
the located error are `_jaxpr_lex`'s.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core.ir import dtypes
from lamina_core.ir._avals import AbstractValue, ShapedArray, types_match
from lamina_core.ir._effects import no_effects
from lamina_core.ir._jaxpr import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var
from lamina_core.ir._jaxpr_decoders import (
    LONG_DTYPES,
    open_jaxpr_params,
    param_decoders,
    param_types,
    short_dtype_names,
)
from lamina_core.ir._jaxpr_lex import (
    LITERAL_WORDS,
    JaxprSyntaxError,
    Token,
    TokenReader,
    consts_before,
    shared_blocks,
)
from lamina_core.ir._literals import typed_scalar
from lamina_core.ir._primitive import Primitive, primitives_named
from lamina_core.ir._rules import (
    abstract_eval_rules,
    effects_rules,
    impl_rules,
    value_impl_rules,
)


class _Word(str):
    """A bare word in params: a string, a dtype's name or a shared jaxpr's name."""

    __slots__ = ()


def _drop(eqn: JaxprEqn, dropped: dict[int, Var]) -> JaxprEqn:
    """`eqn` with its outputs among `dropped` (binders `_` never read) made `DropVar`s."""
    if not any(id(v) in dropped for v in eqn.outvars):
        return eqn
    outs = tuple(DropVar(v.aval) if id(v) in dropped else v for v in eqn.outvars)
    return eqn.replace(outvars=outs)


class _Parser(TokenReader):
    def __init__(self, text: str, consts: Sequence[Any] | None) -> None:
        super().__init__(text)
        self.consts = consts
        self.used = 0
        self.shared: dict[str, Jaxpr] = {}
        self.shared_consts: dict[str, list[Any]] = {}
        self.shared_closed: dict[str, ClosedJaxpr] = {}
        self.dtypes = short_dtype_names()
        self.types: dict[str, ShapedArray] = {}
        self.blocks: dict[str, int] = {}
        self.block_end: dict[str, int] = {}
        self.parsing: set[str] = set()
        self.underscores: list[dict[int, Var]] = []

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

    # --- program and jaxprs -----------------------------------------------------------------

    def program(self) -> ClosedJaxpr:
        self.blocks = shared_blocks(self.tokens)
        while self.tok.kind == "name" and self.tok.text == "let" and self.peek(2).kind == "=":
            self.i += 1
            name_tok = self.expect("name", "the shared jaxpr's name")
            self.expect("=")
            name = name_tok.text
            if self.blocks.get(name) != self.i:
                raise self.error(f"the shared jaxpr '{name}' is defined twice", name_tok)
            if name not in self.shared:  # else parsed already, where an earlier one used it
                self.shared_block(name)
            self.i = self.block_end[name]
            self.keyword("in")
        self.used = start = consts_before(self.tokens, self.i)
        jaxpr = self.jaxpr()
        if self.tok.kind != "end":
            raise self.error(f"expected the end of the text, found {self.found()}")
        if self.consts is not None and self.used < len(self.consts):
            raise self.error(
                f"consts has {len(self.consts)} values but the text elides {self.used}"
            )
        return ClosedJaxpr(jaxpr, self.taken(start, jaxpr))

    def shared_block(self, name: str) -> Jaxpr:
        """Parse the jaxpr of `let name = { … } in` (with the cursor on its `{`, or anywhere
        when an earlier block uses it before its definition)."""
        if name in self.parsing:
            raise self.error(f"the shared jaxpr '{name}' uses itself")
        self.parsing.add(name)
        cursor, used = self.i, self.used
        self.i = self.blocks[name]
        self.used = start = consts_before(self.tokens, self.i)
        jaxpr = self.jaxpr()
        self.shared[name] = jaxpr
        self.shared_consts[name] = self.taken(start, jaxpr)
        self.block_end[name] = self.i
        self.i, self.used = cursor, used
        self.parsing.discard(name)
        return jaxpr

    def taken(self, start: int, jaxpr: Jaxpr) -> list[Any]:
        """The values of `jaxpr`'s constvars, the first consts it took from `start` on."""
        return list(self.consts or [])[start : start + len(jaxpr.constvars)]

    def jaxpr(self, take_consts: bool = True) -> Jaxpr:
        """`{ lambda consts ; args . let eqns in (outs) }`; constvars take values from the
        consts when `take_consts` (they are counted, the values read by the caller)."""
        self.expect("{", "'{' opening a jaxpr")
        self.keyword("lambda")
        scope: dict[str, Var] = {}
        self.underscores.append({})
        constvars = self.binders(scope, ";")
        if take_consts:
            for v in constvars:
                self.next_const(f"constvar of type {v.aval.str_short()}", self.tok)
        self.expect(";")
        invars = self.binders(scope, ".")
        self.expect(".")
        self.keyword("let")
        eqns: list[JaxprEqn] = []
        while not self.at_in():
            if self.tok.kind == ";":
                self.i += 1
                continue
            if self.tok.kind in ("end", "}"):
                raise self.error(f"expected an equation or 'in', found {self.found()}")
            eqns.append(self.eqn(scope))
        self.i += 1
        self.expect("(", "'(' opening the outputs")
        outvars = []
        while self.tok.kind != ")":
            outvars.append(self.atom(scope))
            if self.tok.kind == ",":
                self.i += 1
            elif self.tok.kind != ")":
                raise self.error(f"expected ',' or ')' in the outputs, found {self.found()}")
        self.i += 1
        self.expect("}", "'}' closing the jaxpr")
        dropped = self.underscores.pop()
        if dropped:
            eqns = [_drop(e, dropped) for e in eqns]
        effects = frozenset().union(*(e.effects for e in eqns)) if eqns else no_effects
        return Jaxpr(constvars, invars, outvars, eqns, effects)

    def at_in(self) -> bool:
        return self.tok.kind == "name" and self.tok.text == "in" and self.peek().kind == "("

    def binders(
        self, scope: dict[str, Var], stop: str, taken: dict[str, Var] | None = None
    ) -> list[Var]:
        out = []
        while self.tok.kind != stop:
            name = self.expect("name", f"a variable or {stop!r}")
            self.expect(":", "':' and the variable's type")
            aval = self.aval_type()
            var = Var(aval)
            if name.text == "_":
                # Mostly a dropped output; but a callee's binder printed with its caller's
                # `_` is read (`in (_, b)`): which it is shows at the end of the jaxpr.
                self.underscores[-1][id(var)] = var
            elif name.text in scope or (taken is not None and name.text in taken):
                raise self.error(f"variable '{name.text}' is bound twice", name)
            scope[name.text] = var
            out.append(var)
        return out

    def aval_type(self) -> ShapedArray:
        tok = self.tok
        if tok.kind != "type":  # malformed, or a form not read yet: the slow path says which
            return self.type_tokens()
        aval = self.types.get(tok.text)
        if aval is None:
            weak = tok.text.startswith("~")
            name, _, dims = tok.text[weak:-1].partition("[")
            dtype = self.dtypes.get(name)
            if dtype is None:
                raise self.error(
                    f"unknown dtype '{name}' in a type", tok._replace(pos=tok.pos + weak)
                )
            shape = tuple(map(int, dims.split(","))) if dims else ()
            aval = self.types[tok.text] = ShapedArray(shape, dtype, weak)
        self.i += 1
        return aval

    def type_tokens(self) -> ShapedArray:
        weak = self.tok.kind == "~"
        if weak:
            self.i += 1
        tok = self.expect("name", "a type such as f32[3]")
        dtype = self.dtypes.get(tok.text)
        if dtype is None:
            raise self.error(f"unknown dtype '{tok.text}' in a type", tok)
        if self.tok.kind != "[" or self.tok.spaced:
            raise self.error(f"expected '[' and the shape after '{tok.text}'")
        self.i += 1
        shape = []
        while self.tok.kind != "]":
            dim = self.expect("num", "a dimension size or ']'")
            if not dim.text.isdigit():
                raise self.error(f"a dimension size is an integer, found {dim.text!r}", dim)
            shape.append(int(dim.text))
            if self.tok.kind == "," and self.peek().kind == "num":
                self.i += 1
            elif self.tok.kind != "]":
                raise self.error(f"expected ',' or ']' in a shape, found {self.found()}")
        self.i += 1
        if self.tok.kind == "{" and not self.tok.spaced:
            raise self.error("types varying over manual axes ({V:...}) are not read yet")
        return ShapedArray(tuple(shape), dtype, weak)

    # --- equations --------------------------------------------------------------------------

    def eqn(self, scope: dict[str, Var]) -> JaxprEqn:
        first = self.tok
        outvars: list[Var] = []
        binders = scope
        if first.kind == "name" and self.peek().kind == ":":
            # An equation's outputs are bound after its operands are read.
            binders = {}
            outvars = self.binders(binders, "=", taken=scope)
            self.i += 1
        prim_tok = self.expect("name", "a primitive's name")
        params: dict[str, Any] = {}
        if self.tok.kind == "[" and not self.tok.spaced:
            self.i += 1
            params = self.params(prim_tok.text)
        invars = []
        while not self.eqn_ends(first):
            invars.append(self.atom(scope))
        prim = self.primitive(prim_tok, len(outvars))
        in_avals = [a.aval for a in invars]
        out_avals = [v.aval for v in outvars]
        try:
            decoder = param_decoders.get(prim.name)
            if decoder is not None:
                params = decoder(params, in_avals, out_avals)
            rule = effects_rules.get(prim)
            effects = no_effects if rule is None else rule(*in_avals, **params)
            typed = self.result_types(prim, in_avals, params)
            matches = typed is None or (
                len(typed) == len(out_avals) and all(map(types_match, typed, out_avals))
            )
        except Exception as e:  # a rule's complaint about what the text says
            raise self.error(f"bad equation for '{prim.name}': {e}", prim_tok) from e
        if not matches:
            assert typed is not None
            said = " ".join(a.str_short() for a in out_avals) or "no outputs"
            made = " ".join(a.str_short() for a in typed) or "no outputs"
            raise self.error(
                f"type mismatch: '{prim.name}' of these operands gives {made}, the text says "
                f"{said}",
                first,
            )
        if binders is not scope:
            scope.update(binders)
        return JaxprEqn(tuple(invars), tuple(outvars), prim, params, effects)

    @staticmethod
    def result_types(
        prim: Primitive, in_avals: list[AbstractValue], params: dict[str, Any]
    ) -> list[AbstractValue] | None:
        """What the primitive's abstract evaluation makes of the operands (None: no rule)."""
        rule = abstract_eval_rules.get(prim)
        if rule is None:
            return None
        try:
            out = rule(*in_avals, **params)
        except NameError:
            # An axis name bound by an enclosing shard_map or vmap the text does not show
            # here: no type to check against.
            return None
        return [out] if isinstance(out, AbstractValue) else list(out)

    def eqn_ends(self, first: Token) -> bool:
        tok = self.tok
        if tok.kind in (";", "}", "end", ")") or self.at_in():
            return True
        return tok.line_col >= 0 and first.line_col >= 0 and tok.line_col <= first.line_col

    def primitive(self, tok: Token, n_out: int) -> Primitive:
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
        return found[0]

    def atom(self, scope: dict[str, Var]) -> Var | Literal:
        tok = self.tok
        if tok.kind == "name" and not (tok.text in LITERAL_WORDS and self.peek().kind == ":"):
            var = scope.get(tok.text)
            if var is None:
                raise self.error(f"unbound variable '{tok.text}'", tok)
            if tok.text == "_":
                self.underscores[-1].pop(id(var), None)
            self.i += 1
            return var
        if tok.kind == "elided":
            self.i += 1
            self.expect(":", "':' and the constant's type")
            aval = self.aval_type()
            value = self.next_const(f"[...]:{aval.str_short()}", tok)
            if tuple(np.shape(value)) != aval.shape:
                raise self.error(
                    f"the value given for [...]:{aval.str_short()} has shape {np.shape(value)}",
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
        aval = self.aval_type()
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

    # --- params -----------------------------------------------------------------------------

    def params(self, prim: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        while self.tok.kind != "]":
            key = self.expect("name", "a param name or ']'")
            self.expect("=", f"'=' after the param name '{key.text}'")
            if key.text in out:
                raise self.error(f"param '{key.text}' given twice", key)
            out[key.text] = self.resolve(prim, key.text, self.value(prim, key.text))
        self.i += 1
        return out

    def value(self, prim: str, key: str) -> Any:
        tok = self.tok
        if tok.kind == "{" and self.peek().kind == "name" and self.peek().text == "lambda":
            return self.param_jaxpr(prim, key, None)
        if tok.kind in ("(", "[", "{"):
            close = {"(": ")", "[": "]", "{": "}"}[tok.kind]
            self.i += 1
            items = []
            while self.tok.kind != close:
                if self.tok.kind == "end":
                    raise self.error(f"expected {close!r}, found the end of the text")
                items.append(self.value(prim, key))
                if self.tok.kind == ",":
                    self.i += 1
            self.i += 1
            if tok.kind == "[":
                return items
            if tok.kind == "(":
                return tuple(items)
            try:
                return set(items)
            except TypeError:
                raise self.error("a set holds hashable values only", tok) from None
        if tok.kind == "str":
            self.i += 1
            return tok.text[1:-1]
        if tok.kind == "name" and tok.text == "None":
            self.i += 1
            return None
        number = self.scalar()
        if number is not None:
            return number
        if tok.kind in ("name", "<") and not (self.peek().kind == "=" and not self.peek().spaced):
            return self.word(prim, key)
        raise self.error(f"expected a value for param '{key}', found {self.found()}")

    def word(self, prim: str, key: str) -> Any:
        start = self.tok.pos
        end = start
        while True:
            tok = self.tok
            self.i += 1
            end = tok.pos + len(tok.text)
            nxt = self.tok
            piece = self.text[start:end]
            if piece.startswith("<") and piece.count("<") > piece.count(">"):
                # A repr such as `<function f at 0xXXXX>`, spaces included.
                if nxt.kind in ("end", "]"):
                    raise self.error("expected '>' closing a <...> value")
                continue
            if nxt.spaced or nxt.kind in ("]", ")", ",", "end", "(", "="):
                break
        if self.tok.kind == "(" and not self.tok.spaced:
            head = self.text[start:end]
            if head == "frozenset":
                self.i += 1
                inner = self.value(prim, key)
                if not isinstance(inner, (set, tuple, list)):
                    raise self.error("expected a set in frozenset(...)")
                self.expect(")")
                return frozenset(inner)
            cls = param_types.get(head)
            if cls is not None and not issubclass(cls, enum.Enum):
                return self.construct(cls, prim, key)
            scalar_type = LONG_DTYPES.get(head[3:]) if head.startswith("np.") else None
            if scalar_type is not None:  # a NumPy scalar's repr, `np.int64(2)`
                self.i += 1
                number = self.scalar()
                if number is None:
                    raise self.error(f"expected a number in {head}(...), found {self.found()}")
                self.expect(")")
                return scalar_type.type(number)
            depth = 0
            while True:
                tok = self.tok
                if tok.kind == "end":
                    raise self.error("expected ')' closing a param value")
                self.i += 1
                depth += {"(": 1, ")": -1}.get(tok.kind, 0)
                if depth == 0:
                    end = tok.pos + 1
                    break
        return _Word(self.text[start:end])

    def construct(self, cls: type, prim: str, key: str) -> Any:
        """`Cls(a, b=c, ...)` with the cursor on `(`: the value `cls(a, b=c, ...)`."""
        start = self.tok
        self.i += 1
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        while self.tok.kind != ")":
            if self.tok.kind == "name" and self.peek().kind == "=":
                name = self.tok.text
                self.i += 2
                kwargs[name] = self.resolve(prim, key, self.value(prim, key))
            else:
                args.append(self.resolve(prim, key, self.value(prim, key)))
            if self.tok.kind == ",":
                self.i += 1
            elif self.tok.kind != ")":
                raise self.error(
                    f"expected ',' or ')' in {cls.__name__}(...), found {self.found()}"
                )
        self.i += 1
        try:
            return cls(*args, **kwargs)
        except Exception as e:  # the class's own complaint about its arguments
            raise self.error(f"cannot make {cls.__name__} from the text: {e}", start) from e

    def param_jaxpr(self, prim: str, key: str, shared: str | None) -> Jaxpr | ClosedJaxpr:
        is_open = key in open_jaxpr_params.get(prim, ())
        if shared is not None:
            jaxpr = self.shared[shared]
            if is_open:
                return jaxpr
            closed = self.shared_closed.get(shared)
            if closed is None:
                closed = ClosedJaxpr(jaxpr, self.shared_consts[shared])
                self.shared_closed[shared] = closed
            return closed
        taken = self.used
        jaxpr = self.jaxpr(take_consts=not is_open)
        if is_open:
            return jaxpr
        return ClosedJaxpr(jaxpr, self.taken(taken, jaxpr))

    def resolve(self, prim: str, key: str, value: Any) -> Any:
        if isinstance(value, _Word):
            if key != "name" and value in self.blocks:
                if value not in self.shared:
                    self.shared_block(value)
                return self.param_jaxpr(prim, key, value)
            dtype = LONG_DTYPES.get(value)
            if dtype is not None:
                return dtype
            cls_name, _, member = value.partition(".")
            cls = param_types.get(cls_name)
            if cls is not None and issubclass(cls, enum.Enum) and member in cls.__members__:
                return cls[member]
            return str(value)
        if type(value) is tuple:
            return tuple(self.resolve(prim, key, v) for v in value)
        if type(value) is list:
            return [self.resolve(prim, key, v) for v in value]
        return value


def parse(text: str, consts: Sequence[Any] | None = None) -> ClosedJaxpr:
    """The jaxpr `text` prints (as `str(closed_jaxpr)` makes it), with `consts` the values of
    its top-level constvars and elided array constants in print order.

    Raises `JaxprSyntaxError`, naming the line and column, for text that is not such a jaxpr.
    """
    return parse_program(text, consts)[0]


def parse_program(
    text: str, consts: Sequence[Any] | None = None
) -> tuple[ClosedJaxpr, dict[str, Jaxpr]]:
    """`parse`, with the jaxprs of the text's `let name = { … } in` blocks by name."""
    parser = _Parser(text, consts)
    try:
        return parser.program(), parser.shared
    except JaxprSyntaxError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as e:
        # A case the reader's own checks miss: still a located error, never a traceback.
        raise parser.error(f"cannot read the text here ({type(e).__name__}: {e})") from e
