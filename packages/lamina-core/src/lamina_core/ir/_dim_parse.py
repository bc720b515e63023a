"""Reading symbolic shapes: `symbolic_shape("b, 2*b + 1")` and scope constraints (`"a >= b"`).

The grammar is JAX's, tokenized as Python source (errors name Python's token kinds, as JAX's):

    shape   := "(" shape ")" | dim ("," dim)* [","]
    dim     := "..." | "_" | expr            ("..." and "_" are filled in from `like`)
    expr    := ["+" | "-"] term (("+" | "-") term)*
    term    := power ("*" power)*
    power   := factor ["^" integer]
    factor  := name | ("mod" | "floordiv" | "max" | "min") "(" expr "," expr ")"
             | ["-"] integer
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Sequence
from typing import Any, Final

from lamina_core.ir._dim_expr import DimExpr, DimSize
from lamina_core.ir._dim_scope import InconclusiveDimensionOperation, SymbolicScope

_OPERATIONS: Final = ("mod", "floordiv", "max", "min")
_FOLLOW_SHAPE: Final = (tokenize.ENDMARKER, tokenize.RPAR)
_FOLLOW_EXPR: Final = (*_FOLLOW_SHAPE, tokenize.COMMA)
_FOLLOW_TERM: Final = (*_FOLLOW_EXPR, tokenize.PLUS, tokenize.MINUS)


def max_dim(d1: DimSize, d2: DimSize, scope: SymbolicScope | None = None) -> DimSize:
    """The larger of two dimensions: one of them when the bounds decide, else `max(d1, d2)`."""
    for first, second in ((d1, d2), (d2, d1)):
        try:
            if first >= second:
                return first
        except InconclusiveDimensionOperation:
            continue
    found = scope or (d1.scope if isinstance(d1, DimExpr) else d2.scope)
    return DimExpr.operation("max", (d1, d2), found)


def min_dim(d1: DimSize, d2: DimSize, scope: SymbolicScope | None = None) -> DimSize:
    """The smaller of two dimensions: one of them when the bounds decide, else `min(d1, d2)`."""
    for first, second in ((d1, d2), (d2, d1)):
        try:
            if first <= second:
                return first
        except InconclusiveDimensionOperation:
            continue
    found = scope or (d1.scope if isinstance(d1, DimExpr) else d2.scope)
    return DimExpr.operation("min", (d1, d2), found)


class _Parser:
    """One parse of a shape specification. Identity is intended: it holds the position."""

    def __init__(
        self, spec: str, like: Sequence[int | None] | None, spec_repr: str, scope: SymbolicScope
    ) -> None:
        self.spec = spec
        self.spec_repr = spec_repr
        self.like = like
        self.scope = scope
        self.dims: list[DimSize] = []
        self.tokens = tokenize.tokenize(io.BytesIO(spec.encode()).readline)

    def parse(self) -> tuple[DimSize, ...]:
        tok = self.take(self.next(), tokenize.ENCODING)
        shape, tok = self.shape(tok)
        self.expect(tok, (tokenize.ENDMARKER,))
        return shape

    def error(self, tok: tokenize.TokenInfo | None, detail: str) -> ValueError:
        text = f"syntax error in symbolic shape {self.spec_repr} in dimension {len(self.dims)}: "
        text += f"{detail}. "
        if tok is not None:
            at = tok.start[1]
            text += f"Parsed '{tok.line[:at]}', remaining '{tok.line[at:]}'."
        return ValueError(text)

    def next(self) -> tokenize.TokenInfo:
        while True:
            try:
                tok = next(self.tokens)
            except StopIteration:
                raise self.error(None, "unexpected end of string") from None
            except tokenize.TokenError as err:
                raise self.error(None, str(err.args[0])) from None
            if tok.exact_type not in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
                return tok

    def expect(self, tok: tokenize.TokenInfo, kinds: Sequence[int]) -> None:
        if tok.exact_type not in kinds:
            names = ", ".join(tokenize.tok_name[k] for k in kinds)
            raise self.error(
                tok, f"expecting one of {{{names}}} but found {tokenize.tok_name[tok.exact_type]}"
            )

    def take(self, tok: tokenize.TokenInfo, kind: int) -> tokenize.TokenInfo:
        self.expect(tok, (kind,))
        return self.next()

    def integer(self, tok: tokenize.TokenInfo) -> tuple[int, tokenize.TokenInfo]:
        self.expect(tok, (tokenize.NUMBER,))
        try:
            value = int(tok.string)
        except ValueError:
            raise self.error(tok, f"expecting integer, found {tok.string}") from None
        return value, self.next()

    def add(self, dim: DimSize | None, tok: tokenize.TokenInfo) -> None:
        if dim is None:
            raise self.error(tok, f"unexpected placeholder for unknown dimension; like={self.like}")
        if isinstance(dim, int) and self.like is not None:
            known = self.like[len(self.dims)]
            if dim != known:
                raise self.error(tok, f"different size {dim} for known dimension; like={self.like}")
        self.dims.append(dim)

    def shape(self, tok: tokenize.TokenInfo) -> tuple[tuple[DimSize, ...], tokenize.TokenInfo]:
        if tok.exact_type == tokenize.LPAR:
            shape, tok = self.shape(self.next())
            return shape, self.take(tok, tokenize.RPAR)
        while tok.exact_type not in _FOLLOW_SHAPE:
            placeholder = tok.exact_type == tokenize.ELLIPSIS or (
                tok.exact_type == tokenize.NAME and tok.string == "_"
            )
            if placeholder:
                if self.like is None:
                    raise self.error(tok, "spec contains ... but no 'like' shape was given")
                needed = len(self.dims) + (tok.exact_type != tokenize.ELLIPSIS)
                if len(self.like) < needed:
                    raise self.error(
                        tok,
                        f"cannot resolve placeholder '{tok.string}' because we parsed "
                        f"{len(self.dims)} already and 'like' shape has only {len(self.like)} "
                        "dimensions",
                    )
            if tok.exact_type == tokenize.ELLIPSIS:
                assert self.like is not None
                for known in self.like[len(self.dims) :]:
                    self.add(known, tok)
                tok = self.next()
                break
            dim: Any
            if placeholder:
                assert self.like is not None
                dim, tok = self.like[len(self.dims)], self.next()
            else:
                dim, tok = self.expr(tok)
            self.add(dim, tok)
            if tok.exact_type in _FOLLOW_SHAPE:
                break
            tok = self.take(tok, tokenize.COMMA)
        return tuple(self.dims), tok

    def expr(self, tok: tokenize.TokenInfo) -> tuple[DimSize, tokenize.TokenInfo]:
        negate = tok.exact_type == tokenize.MINUS
        if tok.exact_type in (tokenize.MINUS, tokenize.PLUS):
            tok = self.next()
        total: DimSize = 0
        while True:
            term, tok = self.term(tok)
            total = total - term if negate else total + term
            if tok.exact_type in _FOLLOW_EXPR:
                return total, tok
            negate = tok.exact_type == tokenize.MINUS
            self.expect(tok, (tokenize.PLUS, tokenize.MINUS))
            tok = self.next()

    def term(self, tok: tokenize.TokenInfo) -> tuple[DimSize, tokenize.TokenInfo]:
        product: DimSize = 1
        while True:
            factor, tok = self.factor(tok)
            if tok.exact_type == tokenize.CIRCUMFLEX:
                power, tok = self.integer(self.next())
                factor = factor**power
            product = product * factor
            if tok.exact_type in _FOLLOW_TERM:
                return product, tok
            tok = self.take(tok, tokenize.STAR)

    def factor(self, tok: tokenize.TokenInfo) -> tuple[DimSize, tokenize.TokenInfo]:
        if tok.exact_type == tokenize.NAME:
            if tok.string in _OPERATIONS:
                return self.operation(tok.string, self.next())
            return DimExpr.variable(tok.string, self.scope), self.next()
        sign = 1
        if tok.exact_type == tokenize.MINUS:
            sign, tok = -1, self.next()
            self.expect(tok, (tokenize.NUMBER,))
        if tok.exact_type == tokenize.NUMBER:
            value, tok = self.integer(tok)
            return sign * value, tok
        self.expect(tok, (tokenize.NAME, tokenize.MINUS, tokenize.NUMBER))
        raise AssertionError("unreachable")  # `expect` raised

    def operation(self, name: str, tok: tokenize.TokenInfo) -> tuple[DimSize, tokenize.TokenInfo]:
        tok = self.take(tok, tokenize.LPAR)
        first, tok = self.expr(tok)
        tok = self.take(tok, tokenize.COMMA)
        second, tok = self.expr(tok)
        tok = self.take(tok, tokenize.RPAR)
        if name == "max":
            return max_dim(first, second, self.scope), tok
        if name == "min":
            return min_dim(first, second, self.scope), tok
        return DimExpr.operation(name, (first, second), self.scope), tok


def symbolic_shape(
    shape_spec: str | None,
    *,
    constraints: Sequence[str] = (),
    scope: SymbolicScope | None = None,
    like: Sequence[int | None] | None = None,
) -> tuple[DimSize, ...]:
    """The shape that `shape_spec` describes, its dimensions integers or `DimExpr`s.

    Args:
        shape_spec: e.g. `"b, 3"` or `"(b, 2*b + 1)"`; None means `"..."`. Dimensions are
            integers, variables, `e1 + e2`, `e1 - e2`, `e1 * e2`, `e ^ k`, `floordiv(e1, e2)`,
            `mod(e1, e2)`, `max(e1, e2)`, `min(e1, e2)`; `_` and `...` take the dimensions of
            `like`.
        constraints: for a new scope: constraints such as `"a >= b"`.
        scope: the scope to make the dimensions in (not with `constraints`).
        like: a shape to fill placeholders from (and to check constant dimensions against).

    Raises:
        ValueError: a malformed specification (JAX's messages), or both `scope` and
            `constraints`.
    """
    spec_repr = repr(shape_spec)
    if shape_spec is None:
        shape_spec = "..."
    elif not isinstance(shape_spec, str):
        raise ValueError(f"polymorphic shape spec should be None or a string. Found {spec_repr}.")
    if scope is None:
        scope = SymbolicScope(constraints)
    elif constraints:
        raise ValueError("Cannot specify both a `scope` and `constraints`.")
    return _Parser(shape_spec, like, spec_repr, scope).parse()


def parse_constraint(text: str, scope: SymbolicScope) -> list[DimSize]:
    """The differences that a constraint says are >= 0 (two for an equality)."""
    if not isinstance(text, str):
        raise ValueError(f"SymbolicScope constraint must be a string: got {text!r}")
    for symbol in ("==", ">=", "<="):
        at = text.find(symbol)
        if at >= 0:
            break
    else:
        raise ValueError("Constraint parsing error: must contain one of '==' or '>=' or '<='")
    flip = symbol == "<="
    left, right = text[:at], text[at + 2 :]
    (e1,) = _Parser(left, None, repr(left), scope).parse()
    (e2,) = _Parser(right, None, repr(right), scope).parse()
    if flip:
        e1, e2 = e2, e1
    diff = e1 - e2
    if isinstance(diff, int):
        if diff < 0 or (symbol == "==" and diff != 0):
            raise ValueError(f"Unsatisfiable explicit constraint: {text}")
        return []
    return [diff, -diff] if symbol == "==" else [diff]
