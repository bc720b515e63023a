"""Param values of printed jaxpr text in forms beyond numbers, words and tuples.

`Head(...)` and `Head[...]` read into a `ValueForm` (its plain, `name=` and `key: value`
items), which the reader registered for `Head` turns into the value (`Mesh('x': 2, ...)`,
`NamedSharding(mesh=..., spec=P('x',))`); a `Head[...]` without one stays a `ValueForm` for the
primitive's decoder (a hi primitive's `Quantize[{}]`). `{...}` is a set, or a dict when its
items are `key: value`. The readers are registered by the layers owning the types
(`register_value_reader`); this module names none.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from lamina_core.ir._avals import ShapedArray
from lamina_core.ir._jaxpr_decoders import (
    JaxprScope,
    ValueForm,
    register_value_reader,
    value_readers,
)
from lamina_core.ir._jaxpr_lex import JaxprSyntaxError, TokenReader
from lamina_core.ir._mesh import AbstractMesh, Mesh, aval_mesh


class FormReading(TokenReader):
    """Reading the bracketed forms of param values (the parser reads the rest)."""

    _meshes: list[AbstractMesh] | None = None
    types: dict[str, ShapedArray]
    """The plain types read so far, by text: those of the mesh scope being read."""
    types_by_mesh: dict[Any, dict[str, ShapedArray]]

    def value(self, prim: str, key: str) -> Any:
        raise NotImplementedError

    def resolve(self, prim: str, key: str, value: Any) -> Any:
        raise NotImplementedError

    def item(self, prim: str, key: str) -> Any:
        return self.resolve(prim, key, self.value(prim, key))

    def form(self, head: str, prim: str, key: str) -> ValueForm:
        """With the cursor on the `(` or `[` after `head`: the form's items, read."""
        bracket = self.tok.kind
        close = ")" if bracket == "(" else "]"
        self.i += 1
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        pairs: list[tuple[Any, Any]] = []
        while self.tok.kind != close:
            if self.tok.kind == "name" and self.peek().kind == "=" and not self.peek().spaced:
                name = self.tok.text
                self.i += 2
                kwargs[name] = self.item(prim, key)
            else:
                item = self.item(prim, key)
                if self.tok.kind == ":":
                    self.i += 1
                    pairs.append((item, self.item(prim, key)))
                else:
                    args.append(item)
            if self.tok.kind == ",":
                self.i += 1
            elif self.tok.kind != close:
                raise self.error(
                    f"expected ',' or {close!r} in {head}{bracket}...{close}, found {self.found()}"
                )
        self.i += 1
        return ValueForm(head, bracket, args, kwargs, pairs)

    def read_form(self, head: str, prim: str, key: str) -> Any:
        """`head(...)`/`head[...]` at the cursor (on the bracket): its registered reader's value,
        or the form itself if no reader is registered for `head`."""
        start = self.tokens[self.i - 1]
        form = self.form(head, prim, key)
        reader = value_readers.get(head)
        if reader is None:
            return form
        try:
            return reader(form)
        except (ValueError, TypeError, KeyError, IndexError) as e:
            close = ")" if form.bracket == "(" else "]"
            raise self.error(
                f"cannot read {head}{form.bracket}...{close} from the text: {e}", start
            ) from e

    def braced(self, prim: str, key: str) -> Any:
        """`{a, b}` (a set) or `{k: v, ...}` (a dict), with the cursor on `{`."""
        start = self.tok
        self.i += 1
        items: list[Any] = []
        pairs: list[tuple[Any, Any]] = []
        while self.tok.kind != "}":
            if self.tok.kind == "end":
                raise self.error("expected '}', found the end of the text")
            item = self.item(prim, key)
            if self.tok.kind == ":":
                self.i += 1
                pairs.append((item, self.item(prim, key)))
            else:
                items.append(item)
            if self.tok.kind == ",":
                self.i += 1
            elif self.tok.kind != "}":
                raise self.error(f"expected ',' or '}}' in a set or dict, found {self.found()}")
        self.i += 1
        try:
            if pairs and items:
                raise TypeError("mixes 'key: value' items and plain ones")
            return dict(pairs) if pairs else set(items)
        except TypeError as e:
            raise self.error(f"not a set or dict: {e}", start) from None

    def text_meshes(self) -> list[AbstractMesh]:
        """The abstract meshes of the `Mesh(...)` and `AbstractMesh(...)` the text prints and
        the registered readers can read, for types that name mesh axes (read on first use)."""
        if self._meshes is not None:
            return self._meshes
        found: list[AbstractMesh] = []
        cursor = self.i
        for k, tok in enumerate(self.tokens):
            nxt = self.tokens[k + 1] if k + 1 < len(self.tokens) else tok
            if tok.kind != "name" or tok.text not in ("Mesh", "AbstractMesh"):
                continue
            if nxt.kind != "(" or nxt.spaced or tok.text not in value_readers:
                continue
            self.i = k
            try:
                mesh = self.value("", "mesh")
            except JaxprSyntaxError:
                continue
            finally:
                self.i = cursor
            if isinstance(mesh, (Mesh, AbstractMesh)) and not mesh.empty:
                abstract = mesh.abstract_mesh
                if abstract not in found:
                    found.append(abstract)
        self._meshes = found
        return found

    def at_key(self) -> bool:
        """Whether the cursor is on the `name=` starting a param."""
        return self.tok.kind == "name" and self.peek().kind == "=" and not self.peek().spaced

    def spaced_word(self, word: str) -> str:
        """A word param value, with the words after it on its line up to the next param
        (`name=my fun`: strings print as they are, spaces included)."""
        tok = self.tok
        if tok.line_col >= 0 or tok.kind in ("]", "end") or self.at_key():
            return word  # the usual case: one word
        prev = self.tokens[self.i - 1]
        start = prev.pos + len(prev.text) - len(word)
        while not (tok.line_col >= 0 or tok.kind in ("]", "end") or self.at_key()):
            self.i += 1
            prev, tok = tok, self.tok
        return self.text[start : prev.pos + len(prev.text)]

    @contextlib.contextmanager
    def jaxpr_scope(self, keys: tuple[str, ...], scope: JaxprScope) -> Iterator[None]:
        """Read a primitive's params (the cursor after its `[`) inside `scope` of the params
        `keys`, read ahead; plain types read in it are those of its mesh."""
        start = self.tok
        found: dict[str, Any] = {}
        cursor, depth, k = self.i, 0, self.i
        while depth >= 0 and self.tokens[k].kind != "end":
            tok = self.tokens[k]
            depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(tok.kind, 0)
            if depth == 0 and tok.kind == "name" and tok.text in keys:
                self.i = k
                if self.at_key():
                    self.i += 2
                    try:
                        found[tok.text] = self.item("", tok.text)
                    finally:
                        self.i = cursor
            k += 1
        try:
            context = scope(**found)
            context.__enter__()
        except (ValueError, TypeError, KeyError) as e:
            raise self.error(f"cannot read the params here: {e}", start) from e
        types = self.types
        self.types = self.types_by_mesh.setdefault(aval_mesh(), {})
        try:
            yield
        finally:
            self.types = types
            context.__exit__(None, None, None)


def _read_shaped_array(form: ValueForm) -> ShapedArray:
    """`ShapedArray(float32[3])`, `ShapedArray(float32[], weak_type=True)`: an aval's repr."""
    if len(form.args) != 1 or not isinstance(form.args[0], ShapedArray) or form.pairs:
        raise TypeError("expected ShapedArray(type)")
    extra = set(form.kwargs) - {"weak_type"}
    if extra:
        raise TypeError(f"unexpected {extra.pop()}=")
    aval: ShapedArray = form.args[0]
    return aval.update(weak_type=bool(form.kwargs.get("weak_type", aval.weak_type)))


register_value_reader("ShapedArray", _read_shaped_array)  # the IR's own type: read here
