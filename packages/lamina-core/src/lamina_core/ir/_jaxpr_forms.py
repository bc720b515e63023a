"""Equations printed in a form of their own, read back by the layer that prints them.

Most equations print as `outs = prim[params] operands`. A primitive whose print rule writes
something else (a Ref's `c:f32[4] <- b[1,:]`, `b[0,:] <- d`, `b[...] += v`) registers a reader
for the marker its form holds (`register_eqn_form(" <- ", reader)`): an equation whose line
holds the marker before any `=` is read by it. The reader gets the equation's text and an
`EqnSource` to resolve what the text names (variables, literals, elided constants, types),
and says which primitive it binds with which operands, params and outputs; `parse` checks
the result as any other equation.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, NamedTuple, TypeAlias

import numpy as np

from lamina_core.ir._avals import AbstractValue, ShapedArray, types_match
from lamina_core.ir._jaxpr import Atom, DropVar, JaxprEqn, Literal, Var
from lamina_core.ir._jaxpr_lex import JaxprSyntaxError, Token
from lamina_core.ir._literals import typed_scalar

if TYPE_CHECKING:  # the parser is the caller; only its type is named here
    from lamina_core.ir._jaxpr_eqns import EqnReading


class ReadEqn(NamedTuple):
    """What an equation form's reader makes of its text."""

    primitive: str
    """The primitive's name (found among the primitives defined, as for any equation)."""
    outvars: list[tuple[str, AbstractValue | None]]
    """The binders: name and type; `("_", None)` for a dropped output (`DropVar`) the primitive
    types, or `("", None)` for an output the text does not show (a variable nobody reads)."""
    invars: list[Atom]
    """The operands, from `EqnSource.atom`."""
    params: dict[str, Any]


class EqnSource:
    """What an equation form's reader may ask of the text around the equation."""

    def __init__(self, parser: EqnReading, scope: dict[str, Var]) -> None:
        self._parser = parser
        self._scope = scope

    def atom(self, text: str, dtype: Any = None) -> Atom:
        """The operand `text` names: a variable in scope, a literal printed with its type
        (`2.0:f32[]`, `[...]:f32[3]`), or, with `dtype`, one printed without it (`1`, and
        `[...]`, whose value and type are the next elided constant's)."""
        p = self._parser
        var = self._scope.get(text)
        if var is not None:
            return var
        value, colon, ty = text.rpartition(":") if ":" in text else (text, "", "")
        if (not colon and dtype is None) or (value.isidentifier() and value not in _WORDS):
            raise ValueError(f"unbound variable '{value}'")
        if value == "[...]":
            const = p.next_const(f"[...]{colon}{ty}", p.tok)
            shape, kind = np.shape(const), np.asarray(const).dtype
            aval = self.type(ty) if colon else ShapedArray(shape, kind)
            if getattr(aval, "shape", None) != shape:
                raise ValueError(f"the value given for {text} has shape {shape}")
            return Literal(const, aval)
        aval = self.type(ty) if colon else ShapedArray((), np.dtype(dtype))
        if not isinstance(aval, ShapedArray) or aval.shape:
            raise ValueError(f"a literal printed in full is a scalar, found {text!r}")
        number: bool | int | float | complex
        try:
            number = _WORDS[value] if value in _WORDS else int(value)
        except ValueError:
            try:
                number = complex(value) if "j" in value else float(value)
            except ValueError:
                raise ValueError(f"expected a variable or a literal, found {text!r}") from None
        if aval.dtype.kind in "iub" and not isinstance(number, int):
            raise ValueError(
                f"a literal of type {aval.str_short(True)} is an integer, found {value!r}"
            )
        val = bool(number) if aval.dtype.kind == "b" else typed_scalar(number, aval.dtype)
        return Literal(val, aval)

    def type(self, text: str) -> AbstractValue:
        """The type printed as `text` (`f32[3]`, `Ref{f32[3]}`)."""
        return self._parser.type_text(text)


EqnReader: TypeAlias = Callable[[str, EqnSource], ReadEqn]
"""`reader(text, source) -> ReadEqn`: the equation printed as `text` (one line). It raises
`ValueError` or `TypeError` naming what is wrong; `parse` adds where."""

eqn_forms: dict[str, EqnReader] = {}
"""Readers of equations printed in forms of their own, by the marker the form holds."""

repeats: dict[str, Callable[[str], int]] = {}
"""By marker: how many of the `[...]` of an equation's line repeat one printed before on it."""


def register_eqn_form(
    marker: str, reader: EqnReader, repeated: Callable[[str], int] | None = None
) -> None:
    """Read equations whose line holds `marker` (before any `=`) with `reader`. A form that
    prints an operand twice (a Ref's kept `swap`, `c:f32[2], b[[...]] <- b[[...]], d`) says
    with `repeated(line)` how many `[...]` of the line repeat one: those take no value."""
    if eqn_forms.setdefault(marker, reader) is not reader:
        raise ValueError(f"an equation form with the marker {marker!r} is already registered")
    if repeated is not None:
        repeats[marker] = repeated


def repeated_consts(text: str, end: int) -> int:
    """How many `[...]` before `end` in `text` repeat one (see `register_eqn_form`)."""
    count = 0
    for line in re.split(r"[\n;]", text[:end]):
        for marker, repeated in repeats.items():
            at = line.find(marker)
            if at >= 0 and "=" not in line[:at]:
                count += repeated(line.strip())
    return count


_LINE: Final = re.compile(r"[^\n;]*")
_WORDS: Final[dict[str, bool | float]] = {
    "True": True,
    "False": False,
    "inf": np.inf,
    "nan": np.nan,
}
"""Literals spelled as words."""


def _line(text: str, pos: int) -> str:
    """The equation starting at `pos`, if it is on one line: up to a newline, a `;` or the
    ` in (` ending a jaxpr printed on one line."""
    line = _LINE.match(text, pos).group()  # type: ignore[union-attr]  # matches any text
    end = line.find(" in (")
    return line if end < 0 else line[:end]


def custom_form(text: str, pos: int) -> str | None:
    """The marker of the registered form the equation at `pos` is printed in, if any."""
    line = _line(text, pos)
    for marker in eqn_forms:
        at = line.find(marker)
        # Before it, no ` = ` of outputs nor `key=` of params: the marker is the form's.
        if at >= 0 and "=" not in line[:at]:
            return marker
    return None


def read_custom_eqn(p: EqnReading, scope: dict[str, Var], first: Token, marker: str) -> JaxprEqn:
    """The equation at the cursor, read by the reader of `marker`'s form."""
    text = _line(p.text, first.pos).rstrip()
    end = first.pos + len(text)
    try:
        read = eqn_forms[marker](text, EqnSource(p, scope))
    except JaxprSyntaxError as e:
        raise p.error(f"in the equation {text!r}: {e.message}", first) from e
    except (ValueError, TypeError, KeyError, IndexError) as e:
        raise p.error(f"cannot read the equation {text!r}: {e}", first) from e
    while p.tok.kind != "end" and p.tok.pos < end:
        p.i += 1
    prim_tok = first._replace(text=read.primitive)
    prim = p.primitive(prim_tok, len(read.outvars))
    outs = [Var(aval) if aval is not None else None for _, aval in read.outvars]
    known = [v.aval for v in outs if v is not None]
    got = p.checked(prim, read.params, read.invars, known)
    if isinstance(got, Exception):
        raise p.error(f"bad equation for '{prim.name}': {got}", first) from got
    params, effects, typed = got
    if typed is None or len(typed) != len(outs):
        if any(v is None for v in outs):
            raise p.error(f"'{prim.name}' does not type its dropped outputs", first)
        typed = [v.aval for v in outs if v is not None]
    outvars = [
        v if v is not None else Var(t) if name == "" else DropVar(t)
        for v, t, (name, _) in zip(outs, typed, read.outvars, strict=True)
    ]
    if not all(types_match(t, v.aval) for t, v in zip(typed, outvars, strict=True)):
        said = " ".join(v.aval.str_short(True) for v in outvars)
        made = " ".join(a.str_short(True) for a in typed)
        raise p.error(
            f"type mismatch: '{prim.name}' of these operands gives {made}, the text says {said}",
            first,
        )
    for (name, _), v in zip(read.outvars, outvars, strict=True):
        if name not in ("_", ""):
            if name in scope:
                raise p.error(f"variable '{name}' is bound twice", first)
            scope[name] = v
    return JaxprEqn(tuple(read.invars), tuple(outvars), prim, params, effects)
