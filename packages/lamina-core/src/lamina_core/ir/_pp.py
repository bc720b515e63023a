"""A Wadler–Lindig pretty-printing engine (the layout JAX's printer uses).

Documents are text, concatenation, breaks, nesting and groups. Layout is strict: a group is
printed flat exactly when the group alone, printed flat, fits in the rest of the line (what
follows the group is not counted). The top level is in break mode. Text may carry an
annotation; annotated lines get their annotations in a column at the right. Documents may be
colored (ANSI escapes, printed only with `use_color`), with JAX's escapes byte for byte: an
escape is written when text in a new color is, so a line break never carries one, and a
line's annotations are dimmed.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, TypeAlias


class Color(enum.IntEnum):
    """ANSI colors, by their offset in the escape codes (30 + offset: foreground)."""

    BLACK = 0
    RED = 1
    GREEN = 2
    YELLOW = 3
    BLUE = 4
    MAGENTA = 5
    CYAN = 6
    WHITE = 7
    RESET = 9


class Intensity(enum.IntEnum):
    """ANSI intensities, by their escape code."""

    BRIGHT = 1
    DIM = 2
    NORMAL = 22


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


@dataclass(frozen=True, slots=True)
class Colored:
    child: Doc
    foreground: Color | None = None
    background: Color | None = None
    intensity: Intensity | None = None


Doc: TypeAlias = Text | Concat | Break | Nest | Group | Colored

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


def color(
    doc: Doc,
    foreground: Color | None = None,
    background: Color | None = None,
    intensity: Intensity | None = None,
) -> Doc:
    """`doc` in a color (what is not given is inherited from the enclosing color)."""
    return Colored(doc, foreground, background, intensity)


def keyword(doc: Doc) -> Doc:
    return Colored(doc, Color.BLUE, None, Intensity.BRIGHT)


def type_annotation(doc: Doc) -> Doc:
    return Colored(doc, Color.MAGENTA, None, Intensity.NORMAL)


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
            case Nest(_, child) | Group(child) | Colored(child):
                stack.append(child)
    return room >= 0


def format_doc(doc: Doc, width: int = 80, use_color: bool = False) -> str:
    """Lay `doc` out in `width` columns, colored with ANSI escapes if `use_color`."""
    if use_color:
        return _format_colored(doc, width)
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
            case Colored(child):
                stack.append((indent, flat, child))
    rendered = ["".join(parts) for parts in lines]
    if not any(annotations):
        return "\n".join(rendered)
    return _with_annotations(rendered, annotations)


def _with_annotations(lines: list[str], annotations: list[list[str]]) -> str:
    # As JAX's: the column is past the longest line, annotated or not.
    column = max(len(line) for line in lines)
    out: list[str] = []
    for line, notes in zip(lines, annotations, strict=True):
        if not notes:
            out.append(line)
            continue
        out.append(f"{line.ljust(column)} # {notes[0]}")
        out.extend(f"{' ' * column} # {note}" for note in notes[1:])
    return "\n".join(out)


# ---- colored output ---------------------------------------------------------------------------

_Style: TypeAlias = tuple[Color, Color, Intensity]
"""Foreground, background, intensity."""
_PLAIN: Final[_Style] = (Color.RESET, Color.RESET, Intensity.NORMAL)
_DIMMED: Final[_Style] = (Color.RESET, Color.RESET, Intensity.DIM)


def _escape(old: _Style, new: _Style) -> str:
    """The ANSI escape from style `old` to `new` (only what changes), or ''."""
    codes = []
    if old[0] != new[0]:
        codes.append(str(30 + new[0]))
    if old[1] != new[1]:
        codes.append(str(40 + new[1]))
    if old[2] != new[2]:
        codes.append(str(int(new[2])))
    return f"\x1b[{';'.join(codes)}m" if codes else ""


def _format_colored(doc: Doc, width: int) -> str:
    """`format_doc` with colors. The style written last is tracked: text in another style
    first writes the escape to it. A line break writes none, except that an annotated line
    returns to the plain style first; annotations are dimmed, and the output ends plain."""
    lines: list[list[str]] = [[]]
    widths: list[int] = [0]
    annotations: list[list[str]] = [[]]
    column = 0
    written = _PLAIN
    stack: list[tuple[int, bool, Doc, _Style]] = [(0, False, doc, _PLAIN)]
    while stack:
        indent, flat, node, style = stack.pop()
        match node:
            case Text(s) | Break(s) if flat or type(node) is Text:
                lines[-1].append(_escape(written, style) + s)
                written = style
                column += len(s)
                if type(node) is Text and node.annotation is not None:
                    annotations[-1].append(node.annotation)
            case Break(_):
                if annotations[-1]:
                    lines[-1].append(_escape(written, _PLAIN))
                    written = _PLAIN
                widths[-1] = column
                lines.append([" " * indent])
                widths.append(indent)
                annotations.append([])
                column = indent
            case Concat(children):
                stack.extend((indent, flat, child, style) for child in reversed(children))
            case Nest(extra, child):
                stack.append((indent + extra, flat, child, style))
            case Group(child):
                stack.append((indent, flat or _fits(child, width - column), child, style))
            case Colored(child, fg, bg, intensity):
                inner = (fg or style[0], bg or style[1], intensity or style[2])
                stack.append((indent, flat, child, inner))
    widths[-1] = column
    if annotations[-1]:
        lines[-1].append(_escape(written, _PLAIN))
        written = _PLAIN
    note_column = max(widths)
    out: list[str] = []
    for parts, line_width, notes in zip(lines, widths, annotations, strict=True):
        text = "".join(parts)
        for k, note in enumerate(notes):
            pad = " " * (note_column - line_width) if k == 0 else " " * note_column
            dim, undim = _escape(written, _DIMMED), _escape(_DIMMED, _PLAIN)
            written = _PLAIN
            text = f"{text}{dim}{pad} # {note}{undim}" if k == 0 else f"{dim}{pad} # {note}{undim}"
            out.append(text)
        if not notes:
            out.append(text)
    return "\n".join(out) + _escape(written, _PLAIN)
