"""The tokens of printed jaxpr text, a cursor reading them, and the located error it raises.

Layout carries meaning the printer leaves implicit: a params bracket is glued to its
primitive's name (`mul[...]`) while an elided array constant is not (`add [...]:f32[3]`), and
in a broken layout each equation starts a line at its jaxpr's indentation. So every token
keeps whether whitespace precedes it and, when it starts a line, its column.
"""

from __future__ import annotations

import bisect
import re
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


_TOKEN: Final = re.compile(
    r"""(?P<ws>\s+)
    |(?P<elided>\[\.\.\.\])
    |(?P<type>~?[A-Za-z_][\w<>]*\[(?:\d+(?:,\d+)*)?\](?![\w{@]))
    |(?P<num>\d+(?:\.\d*)?(?:[eE][-+]?\d+)?j?)
    |(?P<name>[A-Za-z_<](?:[\w<>]|[.\-](?=[\w<]))*)
    |(?P<str>'[^'\n]*'|"[^"\n]*")
    |(?P<punct>.)""",
    re.VERBOSE,
)


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    spaced = True
    line_start = 0
    at_line_start = True
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        assert kind is not None
        piece = m.group()
        if kind == "ws":
            spaced = True
            newline = piece.rfind("\n")
            if newline >= 0:
                line_start = m.start() + newline + 1
                at_line_start = True
            continue
        col = m.start() - line_start if at_line_start else -1
        tokens.append(Token(piece if kind == "punct" else kind, piece, m.start(), spaced, col))
        spaced = False
        at_line_start = False
    tokens.append(Token("end", "", len(text), True, -1))
    return tokens


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
    for tok in tokens[:stop]:
        kind = tok.kind
        if kind == "elided":
            count += 1
        elif kind == "name" and tok.text == "lambda":
            in_constvars = True
        elif kind == ";":
            in_constvars = False
        elif kind == ":" and in_constvars:
            count += 1
    return count


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
        return self.tokens[min(self.i + k, len(self.tokens) - 1)]

    def error(self, message: str, tok: Token | None = None) -> JaxprSyntaxError:
        return JaxprSyntaxError(message, self.text, (tok or self.tok).pos)

    def found(self, tok: Token | None = None) -> str:
        tok = tok or self.tok
        return "the end of the text" if tok.kind == "end" else repr(tok.text)

    def expect(self, kind: str, what: str | None = None) -> Token:
        tok = self.tok
        if tok.kind != kind:
            raise self.error(f"expected {what or repr(kind)}, found {self.found()}")
        self.i += 1
        return tok

    def keyword(self, word: str) -> Token:
        tok = self.tok
        if tok.kind != "name" or tok.text != word:
            raise self.error(f"expected '{word}', found {self.found()}")
        self.i += 1
        return tok

    def scalar(self) -> bool | int | float | complex | None:
        tok = self.tok
        sign = 1
        if tok.kind == "-":
            sign = -1
            self.i += 1
            tok = self.tok
        if tok.kind == "num":
            self.i += 1
            text = tok.text
            if text.endswith("j"):  # an imaginary number prints without parentheses: `1j`
                return sign * complex(text)
            is_float = any(c in text for c in ".eE")
            return sign * (float(text) if is_float else int(text))
        if tok.kind == "name" and tok.text in LITERAL_WORDS:
            self.i += 1
            if tok.text in ("True", "False"):
                return tok.text == "True"
            return sign * float(tok.text)
        if sign == -1:
            raise self.error(f"expected a number after '-', found {self.found()}")
        return None
