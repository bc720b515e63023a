"""A Wadler–Lindig pretty-printing engine (the layout JAX's printer uses).

Documents are text, concatenation, breaks, nesting and groups. Layout is strict: a group is
printed flat exactly when the group alone, printed flat, fits in the rest of the line (what
follows the group is not counted). The top level is in break mode. Text may carry an
annotation; annotated lines get their annotations in a column at the right.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeAlias


@dataclass(frozen=True, slots=True)
class Text:
    text: str
    annotation: str | None = None


@dataclass(frozen=True, slots=True)
class Concat:
    children: tuple[Doc, ...]


@dataclass(frozen=True, slots=True)
class Break:
    text: str
    """Printed when the enclosing group is flat; otherwise a newline and the indentation."""


@dataclass(frozen=True, slots=True)
class Nest:
    indent: int
    child: Doc


@dataclass(frozen=True, slots=True)
class Group:
    child: Doc


Doc: TypeAlias = Text | Concat | Break | Nest | Group

NIL: Doc = Concat(())


def text(s: str, annotation: str | None = None) -> Doc:
    return Text(s, annotation)


def concat(docs: Iterable[Doc]) -> Doc:
    return Concat(tuple(docs))


def brk(s: str = " ") -> Doc:
    return Break(s)


def nest(indent: int, doc: Doc) -> Doc:
    return Nest(indent, doc)


def group(doc: Doc) -> Doc:
    return Group(doc)


def join(sep: Doc, docs: Sequence[Doc]) -> Doc:
    out: list[Doc] = []
    for i, doc in enumerate(docs):
        if i:
            out.append(sep)
        out.append(doc)
    return Concat(tuple(out))


def _fits(doc: Doc, room: int) -> bool:
    """Whether `doc` printed flat takes at most `room` columns."""
    stack = [doc]
    while stack and room >= 0:
        match stack.pop():
            case Text(s) | Break(s):
                room -= len(s)
            case Concat(children):
                stack.extend(reversed(children))
            case Nest(_, child) | Group(child):
                stack.append(child)
    return room >= 0


def format_doc(doc: Doc, width: int = 80) -> str:
    """Lay `doc` out in `width` columns."""
    lines: list[list[str]] = [[]]
    annotations: list[list[str]] = [[]]
    column = 0
    stack: list[tuple[int, bool, Doc]] = [(0, False, doc)]  # (indent, flat, doc)
    while stack:
        indent, flat, node = stack.pop()
        match node:
            case Text(s, annotation):
                lines[-1].append(s)
                column += len(s)
                if annotation is not None:
                    annotations[-1].append(annotation)
            case Concat(children):
                stack.extend((indent, flat, child) for child in reversed(children))
            case Break(s) if flat:
                lines[-1].append(s)
                column += len(s)
            case Break(_):
                lines.append([" " * indent])
                annotations.append([])
                column = indent
            case Nest(extra, child):
                stack.append((indent + extra, flat, child))
            case Group(child):
                stack.append((indent, flat or _fits(child, width - column), child))
    rendered = ["".join(parts) for parts in lines]
    if not any(annotations):
        return "\n".join(rendered)
    return _with_annotations(rendered, annotations)


def _with_annotations(lines: list[str], annotations: list[list[str]]) -> str:
    column = max(len(line) for line, notes in zip(lines, annotations, strict=True) if notes)
    out: list[str] = []
    for line, notes in zip(lines, annotations, strict=True):
        if not notes:
            out.append(line)
            continue
        out.append(f"{line.ljust(column)} # {notes[0]}")
        out.extend(f"{' ' * column} # {note}" for note in notes[1:])
    return "\n".join(out)
