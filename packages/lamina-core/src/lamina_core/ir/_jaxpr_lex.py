"""The tokens of printed jaxpr text, a cursor reading them, and the located error it raises.

Layout carries meaning the printer leaves implicit: a params bracket is glued to its
primitive's name (`mul[...]`) while an elided array constant is not (`add [...]:f32[3]`), and
in a broken layout each equation starts a line at its jaxpr's indentation. So every token
keeps whether whitespace precedes it and, when it starts a line, its column.
"""

from __future__ import annotations

import bisect
import contextlib
import gc
import re
from collections.abc import Iterator
from typing import Final, NamedTuple


class JaxprSyntaxError(ValueError):
    """Jaxpr text that cannot be read back: says where (line and column) and what was expected."""

    def __init__(self, message: str, text: str, pos: int) -> None:
        line, col = location(text, pos)
        super().__init__(f"line {line}, column {col}: {message}")
        self.line = line
        self.column = col
        self.message = message


def location(text: str, pos: int) -> tuple[int, int]:
    """1-based line and column of offset `pos` in `text`."""
    starts = [0, *(m.end() for m in re.finditer("\n", text))]
    line = bisect.bisect_right(starts, pos)
    return line, pos - starts[line - 1] + 1


class Token(NamedTuple):
    kind: str
    """`name`, `num`, `str`, `elided` (`[...]`), `type` (an array type as `f32[3,4]`, read in
    one piece since programs repeat a few types), `end`, or the punctuation character itself."""
    text: str
    pos: int
    spaced: bool
    """Whitespace (or the start of the text) comes before it."""
    line_col: int
    """Its 0-based column if it is the first token of a line, else -1."""


_TYPE_SHAPE: Final = r"\[(?:\d+(?:,\d+)*)?\](?![\w{@])"
_NAME_TAIL: Final = r"[\w<>]*(?:[.\-][\w<][\w<>]*)*"
_TOKEN: Final = re.compile(
    # One capturing group around the whole: `split` then alternates the text between tokens
    # (whitespace) and the tokens, so tokens cost no match objects. The first character picks
    # the alternative, so the kind of a token is read back from its text (`_Kinds`).
    rf"""(
    [A-Za-z_][\w<>]*(?:{_TYPE_SHAPE}|(?:[.\-][\w<][\w<>]*)*)  # a name, or a type `f32[3]`
    |\d+(?:\.\d*)?(?:[eE][-+]?\d+)?j?
    |\[\.\.\.\]
    |~[A-Za-z_][\w<>]*{_TYPE_SHAPE}
    |<{_NAME_TAIL}
    |'[^'\n]*'|"[^"\n]*"
    |\S)""",
    re.VERBOSE,
)
_NAME_START: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_<")


class _Kinds(dict[str, str]):
    """Token texts to their kinds, each text classified once per text tokenized."""

    def __missing__(self, piece: str) -> str:
        first = piece[0]
        if first in _NAME_START:
            kind = "type" if piece[-1] == "]" else "name"
        elif len(piece) == 1:
            kind = "num" if first.isdecimal() else piece
        else:  # what else the alternatives match: several characters from one start
            kind = {"[": "elided", "~": "type", "'": "str", '"': "str"}.get(first, "num")
        self[piece] = kind
        return kind


def tokenize(text: str) -> list[Token]:
    parts = _TOKEN.split(text)
    kinds = _Kinds()
    new = tuple.__new__
    lead = parts[0]
    pos = len(lead)
    col = pos - lead.rfind("\n") - 1
    spaced = True
    tokens: list[Token] = []
    append = tokens.append
    # `parts` alternates: whitespace (maybe empty), token, whitespace, ..., whitespace.
    for piece, space in zip(parts[1::2], parts[2::2], strict=True):
        append(new(Token, (kinds[piece], piece, pos, spaced, col)))
        pos += len(piece)
        if space == " ":  # the common case first
            pos += 1
            spaced, col = True, -1
        elif space:
            pos += len(space)
            newline = space.rfind("\n")
            spaced, col = True, (-1 if newline < 0 else len(space) - newline - 1)
        else:
            spaced, col = False, -1
    append(Token("end", "", len(text), True, -1))
    return tokens


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """Automatic garbage collection off for the block (as it was before, after it).

    Reading a text makes a tracked object per token and several per equation, all alive until
    the end: the collector would run full collections over the whole heap again and again
    (two per 10,000 equations, each as long as a fifth of the parse) and find nothing to free,
    since none of them is garbage yet. Tokens die with the reader; the program's objects meet
    the collector later, as any others do.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def shared_blocks(tokens: list[Token]) -> dict[str, int]:
    """The leading `let NAME = { … } in` blocks: each name with the index of its `{`. A block
    may use a name defined after it (the printer orders them by first use, breadth first)."""
    blocks: dict[str, int] = {}
    i = 0
    while (
        tokens[i].kind == "name"
        and tokens[i].text == "let"
        and tokens[i + 1].kind == "name"
        and tokens[i + 2].kind == "="
        and tokens[i + 3].kind == "{"
    ):
        blocks.setdefault(tokens[i + 1].text, i + 3)
        depth = 0
        i += 3
        while tokens[i].kind != "end":
            depth += {"{": 1, "}": -1}.get(tokens[i].kind, 0)
            i += 1
            if depth == 0:
                break
        if tokens[i].kind != "name" or tokens[i].text != "in":
            break
        i += 1
    return blocks


def consts_before(tokens: list[Token], stop: int) -> int:
    """How many values the text before token `stop` takes from `consts`: one per elided
    constant and per constvar binder (`lambda a:f32[3] ;` takes one)."""
    count = 0
    in_constvars = False
    prev_kind = ""
    for tok in tokens[:stop]:
        kind = tok.kind
        if kind == "elided" and (tok.spaced or prev_kind != "name"):
            # (`[...]` glued to a name is a Ref's whole-array index: `a[...] <- b`.)
            count += 1
        elif kind == "name" and tok.text == "lambda":
            in_constvars = True
        elif kind == ";":
            in_constvars = False
        elif kind == ":" and in_constvars:
            count += 1
        prev_kind = kind
    return count


_EQN_ENDS: Final = frozenset({";", "}", "end", ")"})
LITERAL_WORDS: Final = frozenset({"True", "False", "inf", "nan"})
"""Words that are literals, not variables, where a `:` and a type follow them."""


class TokenReader:
    """A cursor over the tokens of a text, with the located errors of reading them."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0

    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def peek(self, k: int = 1) -> Token:
        tokens = self.tokens
        at = self.i + k
        return tokens[at] if at < len(tokens) else tokens[-1]

    def at_in(self) -> bool:
        """At the `in (` that ends a jaxpr's equations."""
        tok = self.tokens[self.i]
        # A name is never the last token (`end` is), so the next one exists.
        return tok.kind == "name" and tok.text == "in" and self.tokens[self.i + 1].kind == "("

    def eqn_ends(self, first: Token) -> bool:
        """Whether the token at the cursor is past the equation starting at `first`: a
        closing token, `in (`, or (in a broken layout) a line starting at most as far right."""
        tok = self.tokens[self.i]
        kind = tok.kind
        if kind in _EQN_ENDS:
            return True
        if kind == "name" and tok.text == "in" and self.tokens[self.i + 1].kind == "(":
            return True
        return 0 <= tok.line_col <= first.line_col

    def error(self, message: str, tok: Token | None = None) -> JaxprSyntaxError:
        return JaxprSyntaxError(message, self.text, (tok or self.tok).pos)

    def found(self, tok: Token | None = None) -> str:
        tok = tok or self.tok
        return "the end of the text" if tok.kind == "end" else repr(tok.text)

    def expect(self, kind: str, what: str | None = None) -> Token:
        tok = self.tokens[self.i]
        if tok.kind != kind:
            raise self.error(f"expected {what or repr(kind)}, found {self.found()}")
        self.i += 1
        return tok

    def keyword(self, word: str) -> Token:
        tok = self.tokens[self.i]
        if tok.kind != "name" or tok.text != word:
            raise self.error(f"expected '{word}', found {self.found()}")
        self.i += 1
        return tok

    def scalar(self) -> bool | int | float | complex | None:
        tok = self.tokens[self.i]
        sign = 1
        if tok.kind == "-":
            sign = -1
            self.i += 1
            tok = self.tokens[self.i]
        if tok.kind == "num":
            self.i += 1
            text = tok.text
            if text[-1] == "j":  # an imaginary number prints without parentheses: `1j`
                return sign * complex(text)
            if text.isdigit():
                return sign * int(text)
            return sign * float(text)
        if tok.kind == "name" and tok.text in LITERAL_WORDS:
            self.i += 1
            if tok.text in ("True", "False"):
                return tok.text == "True"
            return sign * float(tok.text)
        if sign == -1:
            raise self.error(f"expected a number after '-', found {self.found()}")
        return None
