"""Jaxprs read back from the text the printer makes: `parse`.

The text leaves out what a program needs besides its structure: the values of elided array
constants (`[...]:f32[16]`) and of the top-level constvars, which `consts` supplies in print
order, and the params a primitive's print rule hides, which its decoder restores
(`_jaxpr_decoders`; `elided_constants` in `_jaxpr_elided` lists the values). Tokens and
the located error are `_jaxpr_lex`'s; equations are read by `_jaxpr_eqns`.
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Sequence
from typing import Any

from lamina_core.ir._avals import AbstractValue, ShapedArray
from lamina_core.ir._effects import no_effects
from lamina_core.ir._jaxpr import Atom, ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Var
from lamina_core.ir._jaxpr_decoders import (
    LONG_DTYPES,
    jaxpr_scopes,
    open_jaxpr_params,
    param_types,
    short_dtype_names,
    value_readers,
)
from lamina_core.ir._jaxpr_eqns import EqnReading
from lamina_core.ir._jaxpr_forms import eqn_forms, repeated_consts
from lamina_core.ir._jaxpr_lex import (
    JaxprSyntaxError,
    collection_paused,
    consts_before,
    shared_blocks,
)
from lamina_core.ir._jaxpr_underscores import Underscores
from lamina_core.ir._jaxpr_values import FormReading
from lamina_core.ir._primitive import Primitive


class _Word(str):
    """A bare word in params: a string, a dtype's name or a shared jaxpr's name."""

    __slots__ = ()


def _drop(eqn: JaxprEqn, dropped: dict[int, Var]) -> JaxprEqn:
    """`eqn` with its outputs among `dropped` (binders `_` never read) made `DropVar`s."""
    if not any(id(v) in dropped for v in eqn.outvars):
        return eqn
    outs = tuple(DropVar(v.aval) if id(v) in dropped else v for v in eqn.outvars)
    return eqn.replace(outvars=outs)


class _Parser(FormReading, EqnReading):
    def __init__(self, text: str, consts: Sequence[Any] | None) -> None:
        super().__init__(text)
        self.consts = consts
        self.used = 0
        self.shared: dict[str, Jaxpr] = {}
        self.shared_consts: dict[str, list[Any]] = {}
        self.shared_closed: dict[str, ClosedJaxpr] = {}
        self.dtypes = short_dtype_names()
        self.types: dict[str, ShapedArray] = {}
        self.types_by_mesh: dict[Any, dict[str, ShapedArray]] = {None: self.types}
        self.forms = any(marker in text for marker in eqn_forms)
        self.blocks: dict[str, int] = {}
        self.block_end: dict[str, int] = {}
        self.parsing: set[str] = set()
        self.prims: dict[tuple[str, bool], Primitive] = {}
        self.seen = {}
        self.underscores = Underscores()
        self.out_hint: list[AbstractValue] | None = None
        """The output types of the equation whose params are being read: what a param
        jaxpr's outputs printed `_` are expected to be (see `_jaxpr_underscores`)."""

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
            # Read where first used: a use may give its types a context (a shard_map body).
            if name not in self.block_end:
                self.block_end[name] = self.matching_brace()
            self.i = self.block_end[name]
            self.keyword("in")
        self.used = start = self.consts_at(self.i)
        jaxpr = self.jaxpr()
        if self.tok.kind != "end":
            raise self.error(f"expected the end of the text, found {self.found()}")
        for name in self.blocks:
            if name not in self.shared:  # unused, but read all the same
                self.shared_block(name)
        if self.consts is not None and self.used < len(self.consts):
            raise self.error(
                f"consts has {len(self.consts)} values but the text elides {self.used}"
            )
        return ClosedJaxpr(jaxpr, self.taken(start, jaxpr))

    def consts_at(self, stop: int) -> int:
        """How many values the text before token `stop` takes from `consts`."""
        count = consts_before(self.tokens, stop)
        if self.forms:  # forms may print a `[...]` twice
            count -= repeated_consts(self.text, self.tokens[stop].pos)
        return count

    def matching_brace(self) -> int:
        """The index of the token after the `}` closing the `{` at the cursor."""
        depth, k = 0, self.i
        while self.tokens[k].kind != "end":
            depth += {"{": 1, "}": -1}.get(self.tokens[k].kind, 0)
            k += 1
            if depth == 0:
                break
        return k

    def shared_block(self, name: str) -> Jaxpr:
        """Parse the jaxpr of `let name = { … } in`, where first used (in the context of the
        equation using it: a shard_map body under its mesh), wherever the cursor is."""
        if name in self.parsing:
            raise self.error(f"the shared jaxpr '{name}' uses itself")
        self.parsing.add(name)
        cursor, used, hint = self.i, self.used, self.out_hint  # read from within an equation
        self.i = self.blocks[name]
        self.used = start = self.consts_at(self.i)
        jaxpr = self.jaxpr()
        self.shared[name] = jaxpr
        self.shared_consts[name] = self.taken(start, jaxpr)
        self.block_end[name] = self.i
        self.i, self.used, self.out_hint = cursor, used, hint
        self.parsing.discard(name)
        return jaxpr

    def taken(self, start: int, jaxpr: Jaxpr) -> list[Any]:
        """The values of `jaxpr`'s constvars, the first consts it took from `start` on."""
        return list(self.consts or [])[start : start + len(jaxpr.constvars)]

    def jaxpr(
        self, take_consts: bool = True, out_hint: Sequence[AbstractValue] | None = None
    ) -> Jaxpr:
        """`{ lambda consts ; args . let eqns in (outs) }`; constvars take values from the
        consts when `take_consts` (they are counted, the values read by the caller)."""
        self.expect("{", "'{' opening a jaxpr")
        self.keyword("lambda")
        scope: dict[str, Var] = {}
        outer, self.seen = self.seen, {}  # types are read in the context of their jaxpr
        self.underscores.enter()
        constvars = self.binders(scope, ";")
        if take_consts:
            for v in constvars:
                self.next_const(f"constvar of type {v.aval.str_short(True)}", self.tok)
        self.expect(";")
        invars = self.binders(scope, ".")
        self.expect(".")
        self.keyword("let")
        eqns: list[JaxprEqn] = []
        tokens = self.tokens
        while not self.at_in():
            if tokens[self.i].kind == ";":
                self.i += 1
                continue
            if tokens[self.i].kind in ("end", "}"):
                raise self.error(f"expected an equation or 'in', found {self.found()}")
            eqns.append(self.eqn(scope))
        self.i += 1
        self.expect("(", "'(' opening the outputs")
        outvars: list[Atom] = []
        while self.tok.kind != ")":
            if self.tok.kind == "name" and self.tok.text == "_" and "_" in scope:
                self.i += 1
                outvars.append(self.underscores.output(len(outvars), out_hint, scope["_"]))
            else:
                outvars.append(self.atom(scope))
            if self.tok.kind == ",":
                self.i += 1
            elif self.tok.kind != ")":
                raise self.error(f"expected ',' or ')' in the outputs, found {self.found()}")
        self.i += 1
        self.expect("}", "'}' closing the jaxpr")
        dropped = self.underscores.leave()
        if dropped:
            eqns = [_drop(e, dropped) for e in eqns]
        effects = frozenset().union(*(e.effects for e in eqns)) if eqns else no_effects
        self.seen = outer
        return Jaxpr(constvars, invars, outvars, eqns, effects)

    def binders(
        self, scope: dict[str, Var], stop: str, taken: dict[str, Var] | None = None
    ) -> list[Var]:
        out = []
        tokens = self.tokens
        while tokens[self.i].kind != stop:
            name = self.expect("name", f"a variable or {stop!r}")
            self.expect(":", "':' and the variable's type")
            aval = self.aval_type()
            var = Var(aval)
            if name.text == "_":
                # Mostly a dropped output; but a callee's binder printed with its caller's
                # `_` is read (`in (_, b)`): which it is shows at the end of the jaxpr.
                self.underscores.bind(var)
            elif name.text in scope or (taken is not None and name.text in taken):
                raise self.error(f"variable '{name.text}' is bound twice", name)
            scope[name.text] = var
            out.append(var)
        return out

    def aval_type(self) -> AbstractValue:
        tok = self.tok
        if tok.kind != "type":  # malformed, or not a plain type: the slow path says which
            return self.type_tokens()
        aval = self.types.get(tok.text)
        if aval is None:
            weak = tok.text.startswith("~")
            name, _, dims = tok.text[weak:-1].partition("[")
            dtype = self.dtypes.get(name)
            if dtype is None:  # a registered type (`q8[2,3]`), or an unknown dtype
                return self.type_tokens()
            shape = tuple(map(int, dims.split(","))) if dims else ()
            aval = self.types[tok.text] = ShapedArray(shape, dtype, weak)
        self.i += 1
        return aval

    # --- params -----------------------------------------------------------------------------

    def params(self, prim: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        scope = jaxpr_scopes.get(prim)
        with self.jaxpr_scope(*scope) if scope is not None else contextlib.nullcontext():
            while self.tok.kind != "]":
                key = self.expect("name", "a param name or ']'")
                self.expect("=", f"'=' after the param name '{key.text}'")
                if key.text in out:
                    raise self.error(f"param '{key.text}' given twice", key)
                value = self.value(prim, key.text)
                if type(value) is _Word:
                    value = self.spaced_word(value)
                out[key.text] = self.resolve(prim, key.text, value)
        self.i += 1
        return out

    def value(self, prim: str, key: str) -> Any:
        tok = self.tok
        if tok.kind == "{" and self.peek().kind == "name" and self.peek().text == "lambda":
            return self.param_jaxpr(prim, key, None)
        if tok.kind == "{":
            return self.braced(prim, key)
        if tok.kind in ("(", "["):
            close = {"(": ")", "[": "]"}[tok.kind]
            self.i += 1
            items = []
            while self.tok.kind != close:
                if self.tok.kind == "end":
                    raise self.error(f"expected {close!r}, found the end of the text")
                items.append(self.value(prim, key))
                if self.tok.kind == ",":
                    self.i += 1
            self.i += 1
            return items if tok.kind == "[" else tuple(items)
        if tok.kind == "str":
            self.i += 1
            return tok.text[1:-1]
        if tok.kind == "name" and tok.text == "None":
            self.i += 1
            return None
        if tok.kind == "type" or (tok.text in LONG_DTYPES and self.peek().kind == "["):
            return self.param_type()  # an aval printed by `str` (`ty=float32[3]`)
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
            if nxt.kind == "[" and piece.isidentifier():  # `Head[...]`, a form
                return self.read_form(piece, prim, key)
        if self.tok.kind == "(" and not self.tok.spaced:
            head = self.text[start:end]
            if head == "frozenset":
                self.i += 1
                inner = self.value(prim, key)
                if not isinstance(inner, (set, tuple, list)):
                    raise self.error("expected a set in frozenset(...)")
                self.expect(")")
                return frozenset(inner)
            if head in value_readers:
                return self.read_form(head, prim, key)
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
        form = self.form(cls.__name__, prim, key)
        try:
            if form.pairs:
                raise ValueError("'key: value' items are not arguments")
            return cls(*form.args, **form.kwargs)
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
        hint = self.out_hint
        jaxpr = self.jaxpr(take_consts=not is_open, out_hint=hint)
        self.out_hint = hint  # for the equation's next jaxpr param
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
    with collection_paused():
        parser = _Parser(text, consts)
        try:
            return parser.program(), parser.shared
        except JaxprSyntaxError:
            raise
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as e:
            # A case the reader's own checks miss: still a located error, never a traceback.
            raise parser.error(f"cannot read the text here ({type(e).__name__}: {e})") from e


def parse_type(text: str) -> AbstractValue:
    """The type printed as `text` (`f32[3]`, `f32[8@x]{V:i}`, `Ref{f32[3]}`): what a type
    reader (`register_type_reader`) uses for the types its text holds.

    Raises `JaxprSyntaxError`, naming the column, for text that is not a type.
    """
    return _Parser("", None).type_text(text)
