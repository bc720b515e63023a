"""Jaxprs as JSON: `to_json` and `from_json`, a lossless, versioned form of the printed text.

The JSON splits a program into what tools want to query — jaxprs, equations, primitives,
variables and their types — and carries the values the text elides, so one document is the
whole program. Each piece that has a printed form keeps it (a type is `"f32[3]"`, a param is its
printed value), and reading goes back through the text reader: the document is rendered as
text with every sub-jaxpr shared by its name, then `parse`d. So both forms accept exactly the
same programs and check them the same way (each equation type-checked by its primitive), and a
reader error is reported at its place in the document (`jaxprs.body.eqns[3]`).
"""

from __future__ import annotations

import base64
import itertools
import json
import re
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final, TypeAlias

import numpy as np

from lamina_core.ir import _pp as pp
from lamina_core.ir import dtypes
from lamina_core.ir._jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from lamina_core.ir._jaxpr_decoders import short_dtype_names
from lamina_core.ir._jaxpr_elided import printed_operands
from lamina_core.ir._jaxpr_io import parse_program
from lamina_core.ir._jaxpr_lex import JaxprSyntaxError, tokenize
from lamina_core.ir._pretty import PpContext, PpSettings, literal_text, pp_atom, pp_eqn

FORMAT: Final = "lamina.jaxpr"
VERSION: Final = 1
_WIDE: Final = 1 << 30  # one line per equation, however long
_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_RESERVED: Final = frozenset({"lambda", "let", "in", "True", "False", "inf", "nan", "None"})


class JaxprJSONError(ValueError):
    """A document `from_json` cannot read: says where in it (`path`) and what is wrong."""

    def __init__(
        self, path: str, message: str, line: int | None = None, column: int | None = None
    ) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message
        self.line = line
        """For a document that is not JSON: where the JSON decoder stopped (1-based)."""
        self.column = column


Encoder: TypeAlias = Callable[[Any], "tuple[str, list[Any]] | None"]
Decoder: TypeAlias = Callable[[str, list[np.ndarray]], Any]
constant_codecs: dict[str, tuple[Encoder, Decoder]] = {}
"""How constants that are not arrays (a Ref, a hi value a program closes over) are stored, by
the kind the document names them with."""


def register_constant_codec(kind: str, encode: Encoder, decode: Decoder) -> None:
    """Let `to_json` store constants that `encode` recognizes: `encode(value)` is None for a
    value not of this kind, else `(meta, arrays)` — a string (a type, say) and the arrays the
    value is made of — stored as `{"kind": kind, "meta": meta, "parts": [...]}`, which
    `from_json` turns back into a value with `decode(meta, arrays)`."""
    if kind in constant_codecs:
        raise ValueError(f"a constant kind named '{kind}' is already registered")
    constant_codecs[kind] = (encode, decode)


# --- writing ------------------------------------------------------------------------------


class _Writer:
    def __init__(self) -> None:
        self.constants: list[dict[str, Any]] = []
        self.names: dict[Jaxpr, str] = {}

    def constant(self, value: Any) -> int:
        self.constants.append(self.entry(value))
        return len(self.constants) - 1

    def entry(self, value: Any) -> dict[str, Any]:
        for kind, (encode, _) in constant_codecs.items():
            encoded = encode(value)
            if encoded is not None:
                meta, parts = encoded
                return {"kind": kind, "meta": meta, "parts": [self.entry(p) for p in parts]}
        array = np.ascontiguousarray(np.asarray(value))
        if array.dtype.kind == "O":
            raise TypeError(
                f"to_json: a constant of type {type(value).__name__} is not an array; "
                "register how to store it (register_constant_codec)"
            )
        return {
            "dtype": dtypes.short_dtype_name(array.dtype),
            "shape": list(array.shape),
            "data": base64.b64encode(array.astype(array.dtype.newbyteorder("<")).tobytes()).decode(
                "ascii"
            ),
        }

    def name_subjaxprs(self, top: Jaxpr) -> list[tuple[str, Jaxpr, list[Any] | None]]:
        """Every jaxpr inside `top`'s params, breadth first, with a name (after the call's
        `name` param where it has one) and the constants of the first closed use."""
        found: list[tuple[str, Jaxpr, list[Any] | None]] = []
        taken: set[str] = set()
        queue: deque[Jaxpr] = deque([top])
        while queue:
            for eqn in queue.popleft().eqns:
                base = str(eqn.params.get("name", "jaxpr")).strip("<>")
                base = base if _NAME.match(base) and base not in _RESERVED else "jaxpr"
                for sub, consts in _subjaxprs(eqn.params):
                    if sub in self.names:
                        continue
                    name, k = base, 0
                    while name in taken:
                        k += 1
                        name = f"{base}{k}"
                    taken.add(name)
                    self.names[sub] = name
                    found.append((name, sub, consts))
                    queue.append(sub)
        return found

    def jaxpr(self, jaxpr: Jaxpr, consts: Sequence[Any] | None) -> dict[str, Any]:
        ctx = PpContext()
        ctx.shared_jaxprs.update(self.names)
        ctx.shared_names.update(self.names.values())
        out: dict[str, Any] = {
            "constvars": [[ctx.name(v), v.aval.str_short(True)] for v in jaxpr.constvars],
            "invars": [[ctx.name(v), v.aval.str_short(True)] for v in jaxpr.invars],
            "eqns": [self.eqn(e, ctx) for e in jaxpr.eqns],
            "outvars": [self.atom(a, ctx) for a in jaxpr.outvars],
        }
        if consts is not None and jaxpr.constvars:
            out["consts"] = [self.constant(c) for c in consts]
        return out

    def atom(self, atom: Var | Literal, ctx: PpContext) -> Any:
        if not isinstance(atom, Literal):
            return ctx.name(atom)
        if np.ndim(atom.val):
            return {"const": self.constant(atom.val), "type": atom.aval.str_short(True)}
        return {"literal": literal_text(atom, print_dtype=False), "type": atom.aval.str_short(True)}

    def eqn(self, eqn: JaxprEqn, ctx: PpContext) -> dict[str, Any]:
        outs = [[ctx.name(v), v.aval.str_short(True)] for v in eqn.outvars]
        ins = [self.atom(a, ctx) for a in eqn.invars]
        line = pp.format_doc(pp_eqn(eqn, ctx, PpSettings()), _WIDE)
        out: dict[str, Any] = {"primitive": eqn.primitive.name}
        params = _standard_params(line, eqn, ctx)
        if params is None:  # the primitive prints in a syntax of its own: keep the line,
            out["text"] = line  # with the values of its `[...]` in the order it prints them
            shown = printed_operands.get(eqn.primitive.name)
            printed = eqn.invars if shown is None else shown(eqn)
            out["consts"] = [
                self.constant(a.val) for a in printed if isinstance(a, Literal) and np.ndim(a.val)
            ]
        else:
            out["params"] = params
        out["invars"], out["outvars"] = ins, outs
        return out


def _subjaxprs(params: Mapping[str, Any]) -> Iterator[tuple[Jaxpr, list[Any] | None]]:
    for key in sorted(params):
        value = params[key]
        for item in value if type(value) is tuple else (value,):
            if isinstance(item, ClosedJaxpr):
                yield item.jaxpr, list(item.consts)
            elif isinstance(item, Jaxpr):
                yield item, None


def _standard_params(line: str, eqn: JaxprEqn, ctx: PpContext) -> dict[str, str] | None:
    """The printed params of an equation laid out as `outs = prim[k=v …] ins`, by name;
    None for any other layout."""
    head = eqn.primitive.name
    if eqn.outvars:
        lhs = " ".join(f"{ctx.name(v)}:{v.aval.str_short(True)}" for v in eqn.outvars)
        head = f"{lhs} = {head}"
    tail = " " + " ".join(pp_atom(a, ctx) for a in eqn.invars)
    if not (line.startswith(head) and line.endswith(tail)):
        return None
    block = line[len(head) : len(line) - len(tail)]
    if not block:
        return {}
    if not (block.startswith("[") and block.endswith("]")):
        return None
    inner = block[1:-1]
    params: dict[str, str] = {}
    tokens = tokenize(inner)
    depth, key, start = 0, None, 0
    for tok, nxt in itertools.pairwise(tokens):
        if depth == 0 and tok.kind == "name" and nxt.kind == "=" and not nxt.spaced:
            if key is not None:
                params[key] = inner[start : tok.pos].strip()
            key, start = tok.text, nxt.pos + 1
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(tok.kind, 0)
    if key is not None:
        params[key] = inner[start:].strip()
    return params


def to_json(closed: ClosedJaxpr) -> str:
    """`closed` as a JSON document that `from_json` reads back into a program printing exactly
    as `closed` and computing the same values; the constants it holds are included.

    The layout puts one equation and one constant on a line, so documents diff as the text does.
    """
    writer = _Writer()
    subs = writer.name_subjaxprs(closed.jaxpr)
    jaxprs = {name: writer.jaxpr(j, consts) for name, j, consts in subs}
    program = writer.jaxpr(closed.jaxpr, closed.consts)
    head = f'{{\n  "format": "{FORMAT}",\n  "version": {VERSION},\n'
    subs_text = ",\n".join(
        f"    {json.dumps(name)}: {_dump_jaxpr(j, '    ')}" for name, j in jaxprs.items()
    )
    consts_text = ",\n".join(f"    {json.dumps(c)}" for c in writer.constants)
    return (
        f'{head}  "jaxprs": {{{_block(subs_text, "  ")}}},\n'
        f'  "program": {_dump_jaxpr(program, "  ")},\n'
        f'  "constants": [{_block(consts_text, "  ")}]\n}}'
    )


def _block(body: str, indent: str) -> str:
    return f"\n{body}\n{indent}" if body else ""


def _dump_jaxpr(obj: dict[str, Any], indent: str) -> str:
    inner = indent + "  "
    fields = []
    for key, value in obj.items():
        if key == "eqns":
            eqns = ",\n".join(f"{inner}  {json.dumps(e)}" for e in value)
            fields.append(f'{inner}"eqns": [{_block(eqns, inner)}]')
        else:
            fields.append(f"{inner}{json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(fields) + f"\n{indent}}}"


# --- reading ------------------------------------------------------------------------------


def _kind(value: Any) -> str:
    names: dict[type, str] = {dict: "an object", list: "an array", str: "a string"}
    return names.get(type(value), type(value).__name__)


def _get(obj: dict[str, Any], key: str, kind: type, path: str) -> Any:
    if key not in obj:
        raise JaxprJSONError(path, f"missing key '{key}'")
    value = obj[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise JaxprJSONError(f"{path}.{key}", f"expected {_kind(kind())}, found {_kind(value)}")
    return value


class _Reader:
    def __init__(self, doc: dict[str, Any]) -> None:
        self.constants = _get(doc, "constants", list, "")
        self.values: list[Any] = []
        self.lines: list[str] = []
        self.where: list[str] = []  # the document path of each line

    def constant(self, k: Any, path: str) -> None:
        if type(k) is not int or not 0 <= k < len(self.constants):
            raise JaxprJSONError(path, f"expected an index into 'constants', found {k!r}")
        self.values.append(_decode_constant(self.constants[k], f"constants[{k}]"))

    def emit(self, text: str, path: str) -> None:
        self.lines.append(text)
        self.where.append(path)

    def binders(self, items: Any, path: str) -> str:
        if not isinstance(items, list):
            raise JaxprJSONError(path, f"expected an array, found {_kind(items)}")
        out = []
        for i, item in enumerate(items):
            if not (
                isinstance(item, list) and len(item) == 2 and all(isinstance(s, str) for s in item)
            ):
                raise JaxprJSONError(f"{path}[{i}]", "expected [name, type], two strings")
            name, ty = item
            if name != "_" and (not _NAME.match(name) or name in _RESERVED):
                raise JaxprJSONError(f"{path}[{i}]", f"{name!r} is not a variable name")
            out.append(f"{name}:{ty}")
        return " ".join(out)

    def atom(self, atom: Any, path: str) -> str:
        if isinstance(atom, str):
            if not _NAME.match(atom) or atom in _RESERVED:
                raise JaxprJSONError(path, f"{atom!r} is not a variable name")
            return atom
        if not isinstance(atom, dict):
            raise JaxprJSONError(path, f"expected a name or an object, found {_kind(atom)}")
        ty = _get(atom, "type", str, path)
        if "const" in atom:
            self.constant(atom["const"], f"{path}.const")
            return f"[...]:{ty}"
        return f"{_get(atom, 'literal', str, path)}:{ty}"

    def jaxpr(self, obj: Any, path: str, head: str) -> None:
        if not isinstance(obj, dict):
            raise JaxprJSONError(path, f"expected an object, found {_kind(obj)}")
        constvars = _get(obj, "constvars", list, path)
        consts = obj.get("consts", [])
        if not isinstance(consts, list) or len(consts) != len(constvars):
            raise JaxprJSONError(
                f"{path}.consts", f"expected {len(constvars)} indices, one per constvar"
            )
        for i, k in enumerate(consts):
            self.constant(k, f"{path}.consts[{i}]")
        cvs = self.binders(constvars, f"{path}.constvars")
        ivs = self.binders(_get(obj, "invars", list, path), f"{path}.invars")
        self.emit(f"{head}{{ lambda {cvs} ; {ivs} . let", path)
        for i, eqn in enumerate(_get(obj, "eqns", list, path)):
            self.eqn(eqn, f"{path}.eqns[{i}]")
        outs = [
            self.atom(a, f"{path}.outvars[{i}]")
            for i, a in enumerate(_get(obj, "outvars", list, path))
        ]
        self.emit(f"  in ({', '.join(outs)}{',' if len(outs) == 1 else ''}) }}", path)

    def eqn(self, eqn: Any, path: str) -> None:
        if not isinstance(eqn, dict):
            raise JaxprJSONError(path, f"expected an object, found {_kind(eqn)}")
        prim = _get(eqn, "primitive", str, path)
        if "text" in eqn:
            for i, k in enumerate(_get(eqn, "consts", list, path)):
                self.constant(k, f"{path}.consts[{i}]")
            self.emit("    " + _get(eqn, "text", str, path), path)
            return
        outs = self.binders(_get(eqn, "outvars", list, path), f"{path}.outvars")
        ins = [
            self.atom(a, f"{path}.invars[{i}]")
            for i, a in enumerate(_get(eqn, "invars", list, path))
        ]
        params = _get(eqn, "params", dict, path)
        shown = []
        for key, value in params.items():
            if not _NAME.match(key) or not isinstance(value, str):
                raise JaxprJSONError(f"{path}.params", f"param {key!r}: expected a string value")
            shown.append(f"{key}={value}")
        block = f"[{' '.join(shown)}]" if shown else ""
        lhs = f"{outs} = " if outs else ""
        self.emit(f"    {lhs}{prim}{block} {' '.join(ins)}", path)


def _decode_constant(obj: Any, path: str) -> Any:
    if not isinstance(obj, dict):
        raise JaxprJSONError(path, f"expected an object, found {_kind(obj)}")
    if "kind" in obj:
        kind = _get(obj, "kind", str, path)
        codec = constant_codecs.get(kind)
        if codec is None:
            raise JaxprJSONError(
                f"{path}.kind",
                f"unknown constant kind {kind!r} (is the package defining it imported?)",
            )
        parts = _get(obj, "parts", list, path)
        arrays = [_decode_constant(p, f"{path}.parts[{i}]") for i, p in enumerate(parts)]
        try:
            return codec[1](_get(obj, "meta", str, path), arrays)
        except Exception as e:  # the codec's own complaint about what the document holds
            raise JaxprJSONError(path, f"cannot make a {kind} constant: {e}") from e
    name = _get(obj, "dtype", str, path)
    dtype = short_dtype_names().get(name)
    if dtype is None:
        raise JaxprJSONError(f"{path}.dtype", f"unknown dtype '{name}'")
    shape = _get(obj, "shape", list, path)
    if not all(type(d) is int and d >= 0 for d in shape):
        raise JaxprJSONError(f"{path}.shape", f"expected sizes (integers >= 0), found {shape}")
    try:
        data = base64.b64decode(_get(obj, "data", str, path), validate=True)
    except ValueError as e:
        raise JaxprJSONError(f"{path}.data", f"not base64: {e}") from None
    want = int(np.prod(shape)) * dtype.itemsize
    if len(data) != want:
        raise JaxprJSONError(
            f"{path}.data", f"{len(data)} bytes for {name}{shape}, which takes {want}"
        )
    return np.frombuffer(data, dtype.newbyteorder("<")).reshape(shape).astype(dtype)


def from_json(document: str) -> ClosedJaxpr:
    """The program of a `to_json` document.

    Raises `JaxprJSONError` naming the place in the document (`program.eqns[2].invars[0]`) for
    a document that is not such a program: malformed JSON, a wrong version, a missing key, a
    bad type or param, an equation its primitive rejects.
    """
    try:
        doc = json.loads(document)
    except json.JSONDecodeError as e:
        raise JaxprJSONError(
            "", f"not JSON: line {e.lineno}, column {e.colno}: {e.msg}", e.lineno, e.colno
        ) from None
    if not isinstance(doc, dict):
        raise JaxprJSONError("", f"expected an object, found {_kind(doc)}")
    if doc.get("format") != FORMAT:
        raise JaxprJSONError("format", f"expected {FORMAT!r}, found {doc.get('format')!r}")
    version = doc.get("version")
    if version != VERSION:
        raise JaxprJSONError("version", f"this reader reads version {VERSION}, found {version!r}")
    reader = _Reader(doc)
    for name, sub in _get(doc, "jaxprs", dict, "").items():
        if not _NAME.match(name) or name in _RESERVED:
            raise JaxprJSONError("jaxprs", f"{name!r} is not a jaxpr name")
        reader.jaxpr(sub, f"jaxprs.{name}", f"let {name} = ")
        reader.lines[-1] += " in"
    reader.jaxpr(_get(doc, "program", dict, ""), "program", "")
    text = "\n".join(reader.lines)
    try:
        closed, shared = parse_program(text, reader.values)
    except JaxprSyntaxError as e:
        raise JaxprJSONError(reader.where[e.line - 1], e.message) from e
    _check_shape(closed, shared, doc)
    return closed


def _check_shape(closed: ClosedJaxpr, shared: dict[str, Jaxpr], doc: dict[str, Any]) -> None:
    """Each jaxpr read has the equations the document lists: text in a param or a type that
    spilled past its place would read as some other program."""
    pairs = [(closed.jaxpr, doc["program"], "program")]
    pairs += [(shared[name], obj, f"jaxprs.{name}") for name, obj in doc["jaxprs"].items()]
    for jaxpr, obj, path in pairs:
        eqns = obj["eqns"]
        if len(jaxpr.eqns) != len(eqns):
            raise JaxprJSONError(path, f"reads as {len(jaxpr.eqns)} equations, not {len(eqns)}")
        for i, (eqn, said) in enumerate(zip(jaxpr.eqns, eqns, strict=True)):
            if eqn.primitive.name != said["primitive"]:
                raise JaxprJSONError(
                    f"{path}.eqns[{i}]", f"reads as a '{eqn.primitive.name}' equation"
                )


__all__ = [
    "FORMAT",
    "VERSION",
    "JaxprJSONError",
    "from_json",
    "register_constant_codec",
    "to_json",
]
