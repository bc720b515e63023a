"""Types read back from printed jaxpr text, beyond the plain array types `parse` reads itself.

A plain type (`f32[3,4]`, `~i32[]`) is one token, read on `parse`'s fast path. This module
reads the rest, as `ShapedArray.str_short` and upper layers print them:

- types varying over manual mesh axes, `f32[3]{V:i}` and `f32[3]{V:(i,j)}` (inside a
  `shard_map(check_vma=True)` body);
- types split over Explicit mesh axes, `f32[8@data,3]` and `f32[8@(x,y)]`;
- types of upper layers, by the reader registered for the name they start with
  (`register_type_reader`): a Ref's `Ref{f32[3]}`, a hi type's `q8[2,3]`.

Axis names resolve against the mesh the type was made over, which the text does not print:
the manual mesh of the enclosing `shard_map` body (its scope puts it in context, as tracing
does), else the mesh in context when `parse` is called (`set_mesh`), else the one mesh of the
text (a printed `Mesh(...)` or `AbstractMesh(...)` having the axes). This module knows no
upper layer: their types come through the registry.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final, TypeAlias

import numpy as np

from lamina_core.ir._avals import AbstractValue, ShapedArray
from lamina_core.ir._jaxpr_decoders import LONG_DTYPES, short_dtype_names
from lamina_core.ir._jaxpr_lex import JaxprSyntaxError, Token, TokenReader
from lamina_core.ir._mesh import AbstractMesh, aval_mesh, get_abstract_mesh

TypeReader: TypeAlias = Callable[[str], AbstractValue]
"""`reader(text) -> type`: the type printed as `text` (all of it, e.g. `Ref{f32[3]}`). It
raises `ValueError` or `TypeError` naming what is wrong; `parse` adds where. A reader may read
the types its text holds with `parse_type`."""

type_readers: dict[str, TypeReader] = {}
"""Readers of the types upper layers print, by the name their text starts with."""


def register_type_reader(name: str, reader: TypeReader) -> None:
    """Read types whose printed text starts with the word `name` (`Ref` for `Ref{f32[3]}`,
    `q8` for a hi type printed `q8[2,3]`) with `reader`. A dtype's name cannot be taken."""
    if not _WORD.fullmatch(name):
        raise ValueError(f"a type reader's name is a word (letters, digits, _), got {name!r}")
    if name in short_dtype_names():
        raise ValueError(f"'{name}' is a dtype's name: a type reader cannot take it")
    if type_readers.setdefault(name, reader) is not reader:
        raise ValueError(f"a reader of types named '{name}' is already registered")


_WORD: Final = re.compile(r"[A-Za-z_]\w*")
_TYPE_END: Final = frozenset({".", ",", ";", ")", "]", "}", "=", "end"})
"""Tokens ending a registered type's text where no bracket of it is open."""


class TypeReading(TokenReader):
    """The slow path of reading a type at the cursor (the parser's fast path reads plain
    ones): annotated and split array types, and registered types."""

    dtypes: dict[str, np.dtype]

    def text_meshes(self) -> list[AbstractMesh]:
        """The abstract meshes of the meshes the text prints (read on first use)."""
        raise NotImplementedError

    def aval_type(self) -> AbstractValue:
        """The type at the cursor (the parser's fast path, falling back on `type_tokens`)."""
        raise NotImplementedError

    def type_text(self, text: str) -> AbstractValue:
        """The type printed as `text`, all of it, read in the context of this text's."""
        sub = type(self)(text, None)  # type: ignore[call-arg]  # the parser's own signature
        sub.dtypes = self.dtypes
        aval = sub.aval_type()
        if sub.tok.kind != "end":
            raise sub.error(f"expected the end of the type, found {sub.found()}")
        return aval

    def array_type(self) -> ShapedArray:
        """The type at the cursor, which must be an array's (a literal's)."""
        tok = self.tok
        aval = self.aval_type()
        if not isinstance(aval, ShapedArray):
            raise self.error(
                f"a literal's type is an array type, found {aval.str_short(True)}", tok
            )
        return aval

    def param_type(self) -> AbstractValue:
        """A type a param holds, printed by `str`: dtypes by their long names (`float32[3]`)."""
        short = self.dtypes
        self.dtypes = {**short, **LONG_DTYPES}
        try:
            return self.type_tokens()
        finally:
            self.dtypes = short

    def type_tokens(self) -> AbstractValue:
        start = self.tok
        weak = start.kind == "~"
        if weak:
            self.i += 1
        tok = self.tok
        body = tok.text
        if tok.kind == "type":  # a whole `name[3,4]` the fast path did not know
            if body.startswith("~"):
                weak, body = True, body[1:]
                tok = tok._replace(pos=tok.pos + 1)
            name = body.partition("[")[0]
        elif tok.kind == "name":
            name = body
        else:
            raise self.error(f"expected a type such as f32[3], found {self.found()}")
        dtype = self.dtypes.get(name)
        if dtype is None:
            word = _WORD.match(name)
            reader = type_readers.get(word.group()) if word else None
            if reader is None:
                raise self.error(f"unknown dtype '{name}' in a type", tok)
            if weak:
                raise self.error(f"a '{name}' type is not weakly typed: drop the '~'", start)
            return self.registered_type(reader)
        if tok.kind == "type":
            self.i += 1
            dims = body.partition("[")[2][:-1]
            plain = tuple(map(int, dims.split(","))) if dims else ()
            return self.annotated(ShapedArray(plain, dtype, weak), tok)
        self.i += 1
        if self.tok.kind != "[" or self.tok.spaced:
            raise self.error(f"expected '[' and the shape after '{tok.text}'")
        self.i += 1
        shape: list[int] = []
        spec: list[Any] = []
        while self.tok.kind != "]":
            dim = self.expect("num", "a dimension size or ']'")
            if not dim.text.isdigit():
                raise self.error(f"a dimension size is an integer, found {dim.text!r}", dim)
            shape.append(int(dim.text))
            spec.append(self.split_entry() if self.tok.kind == "@" else None)
            if self.tok.kind == "," and self.peek().kind == "num":
                self.i += 1
            elif self.tok.kind != "]":
                raise self.error(f"expected ',' or ']' in a shape, found {self.found()}")
        self.i += 1
        if not any(e is not None for e in spec):
            return self.annotated(ShapedArray(tuple(shape), dtype, weak), tok)
        mesh = self.spec_mesh(spec, tok)
        entries = tuple(_on_mesh(e, mesh) for e in spec)
        aval = ShapedArray(tuple(shape), dtype, weak, mesh, spec=entries)
        return self.annotated(aval, tok)

    def split_entry(self) -> Any:
        """After a dimension size: `@name` or `@(name,name)`, the mesh axes it is split over."""
        self.i += 1
        if self.tok.kind == "(":
            self.i += 1
            names = [self.axis_name("a mesh axis name in '@(...)'")]
            while self.tok.kind == ",":
                self.i += 1
                names.append(self.axis_name("a mesh axis name in '@(...)'"))
            self.expect(")", "')' closing the mesh axes of a dimension")
            return tuple(names)
        return self.axis_name("a mesh axis name after '@'")

    def axis_name(self, what: str) -> str:
        tok = self.tok
        if tok.kind not in ("name", "num"):
            raise self.error(f"expected {what}, found {self.found()}")
        self.i += 1
        return tok.text

    def spec_mesh(self, spec: list[Any], tok: Token) -> AbstractMesh:
        """The mesh a type split over the axes of `spec` is laid out over (see the module)."""
        names = {n for e in spec if e is not None for n in (e if type(e) is tuple else (e,))}
        context = [m for m in (aval_mesh(), get_abstract_mesh()) if m is not None and not m.empty]
        for mesh in context:
            if names <= _names(mesh):
                return mesh
        found = self.text_meshes()  # read only when the context has no such mesh
        for mesh in found:
            if names <= _names(mesh):
                return mesh
        known = sorted({n for m in (*context, *found) for n in _names(m)})
        raise self.error(
            f"unknown mesh axis name(s) {', '.join(sorted(names))} in a type: "
            + (
                f"the meshes in context and in the text have axes {', '.join(known)}"
                if known
                else "no mesh is in context or in the text"
            )
            + " (parse under `set_mesh(mesh)` with the mesh the program was traced over)",
            tok,
        )

    def annotated(self, aval: ShapedArray, tok: Token) -> ShapedArray:
        """`aval` with the manual axes a `{V:...}` after it names (none if none follows)."""
        if self.tok.kind != "{" or self.tok.spaced:
            return aval
        self.i += 1
        kind = self.tok
        if kind.kind != "name" or kind.text != "V" or self.peek().kind != ":":
            raise self.error(f"expected 'V:' and manual mesh axes after '{{', found {self.found()}")
        self.i += 2
        if self.tok.kind == "(":
            self.i += 1
            names = [self.axis_name("a manual mesh axis name in '{V:(...)}'")]
            while self.tok.kind == ",":
                self.i += 1
                names.append(self.axis_name("a manual mesh axis name in '{V:(...)}'"))
            self.expect(")", "')' closing the manual mesh axes")
        else:
            names = [self.axis_name("a manual mesh axis name after 'V:'")]
        self.expect("}", "'}' closing the manual mesh axes of a type")
        mesh = aval.mesh or aval_mesh()
        if mesh is None:  # a body printed alone: the names are all there is
            return aval.update(vma=frozenset(names))
        by_name = {str(n): n for n in mesh.axis_names}
        unknown = [n for n in names if n not in by_name]
        if unknown:
            raise self.error(
                f"unknown manual mesh axis '{unknown[0]}' in a type: the mesh here has axes "
                f"{', '.join(by_name)}",
                kind,
            )
        return aval.update(vma=frozenset(by_name[n] for n in names))

    def registered_type(self, reader: TypeReader) -> AbstractValue:
        """The registered type at the cursor: its text runs to the first space, or closing
        punctuation, where none of its brackets is open (and at most to the end of its line)."""
        first = self.tok
        depth = 0
        last = first
        while True:
            tok = self.tok
            if tok is not first and (
                tok.line_col >= 0 or (depth == 0 and (tok.spaced or tok.kind in _TYPE_END))
            ):
                break  # a type is on one line
            if tok.kind in ("(", "[", "{"):
                depth += 1
            elif tok.kind in (")", "]", "}"):
                depth -= 1
            elif tok.kind == "end":
                raise self.error("expected the end of a type, found the end of the text")
            last = tok
            self.i += 1
        text = self.text[first.pos : last.pos + len(last.text)]
        try:
            return reader(text)
        except JaxprSyntaxError as e:
            raise self.error(f"in the type {text!r}: {e.message}", first) from e
        except (ValueError, TypeError, KeyError, IndexError) as e:
            raise self.error(f"cannot read the type {text!r}: {e}", first) from e


def _on_mesh(entry: Any, mesh: AbstractMesh) -> Any:
    """A spec entry read as text, with the mesh's own axis names (not always strings)."""
    by_name = {str(n): n for n in mesh.axis_names}
    if entry is None:
        return None
    if type(entry) is tuple:
        return tuple(by_name[n] for n in entry)
    return by_name[entry]


def _names(mesh: AbstractMesh) -> set[str]:
    return {str(n) for n in mesh.axis_names}
