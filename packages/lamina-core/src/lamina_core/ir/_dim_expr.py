"""Symbolic dimensions: `DimExpr`, integer polynomials over dimension variables (JAX's
`_DimExpr`), with `floordiv`, `mod`, `max` and `min` of expressions as opaque factors.

An expression is a sum of terms with integer coefficients; a term is a product of factors with
exponents; a factor is a variable (`b`) or an operation on expressions (`floordiv(b, 2)`). The
normal form sorts factors and terms in JAX's syntactic order (by size, then by name), so that
expressions print as JAX prints them (`2*b + 1`, `- b + a`, `a*b^2 + a^2*b`) and equal
expressions are equal objects. An expression that is a constant is an `int`.

`+`, `-`, `*` and exact division are always defined. Comparisons are decided from bounds (every
variable is at least 1; constraints of the scope narrow them); one that the bounds do not
decide raises `InconclusiveDimensionOperation`, as JAX's. Expressions of different scopes do
not mix.

`ShapedArray` holds symbolic dimensions, so tracing with `ShapeDtypeStruct`s of symbolic
shapes types every value as JAX does (`f32[b,3]`); a dimension used as a value becomes the
`dim_as_value` primitive (`lax.dimension_as_value`). The lowering computes them from the
dimension variables (`lamina_mlir._dynamic`), and export solves a call's variables
(`evaluate` gives an expression's value for them).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Sequence
from typing import Any

from lamina_core.ir._dim_scope import Bound, InconclusiveDimensionOperation, SymbolicScope

# ---- factors and terms ----------------------------------------------------------------------


class _Factor:
    """A variable, or an operation applied to expressions (or integers). A value: equal and
    hashed by its fields. (A plain class: a slotted dataclass costs a millisecond of every
    `import lamina`, measured.)"""

    __slots__ = ("operands", "operation", "size", "var")

    def __init__(
        self,
        var: str | None = None,
        operation: str | None = None,
        operands: tuple[DimSize, ...] = (),
        size: int = 1,
    ) -> None:
        self.var = var
        self.operation = operation
        self.operands = operands
        self.size = size

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Factor) and (self.var, self.operation, self.operands) == (
            other.var,
            other.operation,
            other.operands,
        )

    def __hash__(self) -> int:
        return hash((self.var, self.operation, self.operands))

    @staticmethod
    def of(operation: str, *operands: DimSize) -> _Factor:
        size = 1 + sum(o.size if isinstance(o, DimExpr) else 1 for o in operands)
        return _Factor(None, operation, operands, size)

    @property
    def key(self) -> tuple[Any, ...]:
        if self.var is not None:
            return (self.size, self.var)
        return (self.size, self.operation, tuple(_key(o) for o in self.operands))

    def __str__(self) -> str:
        if self.var is not None:
            return self.var
        return f"{self.operation}({', '.join(_operand_str(o) for o in self.operands)})"


def _operand_str(o: Any) -> str:
    # JAX holds operands as expressions, so a negative constant prints as a sum does: `- 2`.
    return f"- {-o}" if isinstance(o, int) and o < 0 else str(o)


Term = tuple[tuple[_Factor, int], ...]
"""A product of factors and their exponents (>= 1), largest factor first; () is 1."""


def _term_size(term: Term) -> int:
    return sum(1 + exp * f.size for f, exp in term)


def _term_key(term: Term) -> tuple[Any, ...]:
    return (_term_size(term), tuple((f.key, exp) for f, exp in term))


def _term_str(term: Term) -> str:
    ordered = sorted(term, key=lambda fe: (fe[0].key, fe[1]))
    return "*".join(f"{f}^{exp}" if exp != 1 else str(f) for f, exp in ordered)


def _term_mul(t1: Term, t2: Term) -> Term:
    exps: dict[_Factor, int] = dict(t1)
    for f, exp in t2:
        exps[f] = exps.get(f, 0) + exp
    return tuple(sorted(exps.items(), key=lambda fe: (fe[0].key, fe[1]), reverse=True))


def _term_div(t1: Term, t2: Term) -> Term | None:
    """`t1 / t2` if it is a term, else None."""
    exps: dict[_Factor, int] = dict(t1)
    for f, exp in t2:
        left = exps.get(f, 0) - exp
        if left < 0:
            return None
        if left:
            exps[f] = left
        else:
            exps.pop(f, None)
    return tuple(sorted(exps.items(), key=lambda fe: (fe[0].key, fe[1]), reverse=True))


def _key(e: DimSize) -> tuple[Any, ...]:
    if isinstance(e, DimExpr):
        return e.key
    return (1, (((0, ()), e),))


_AS_VALUE: list[Any] = []
"""`lax`'s `dimension_as_value`, which binds a primitive of a layer above this one."""


def set_dimension_as_value(fn: Any) -> None:
    """Install `fn(dim)`, the traced value of a symbolic dimension (`lax` does)."""
    _AS_VALUE[:] = [fn]


# ---- expressions ---------------------------------------------------------------------------


DimSize = Any
"""An `int` or a `DimExpr`."""


class DimExpr:
    """A symbolic dimension: a sum of terms with integer coefficients (JAX's `_DimExpr`).

    Immutable; made by `symbolic_shape` and by arithmetic on other dimensions, never directly.
    """

    __slots__ = ("_hash", "scope", "terms")
    __array_priority__ = 1000

    terms: tuple[tuple[Term, int], ...]
    """The terms and their nonzero coefficients, largest first (the constant, if any, last)."""
    scope: SymbolicScope

    def __init__(self, terms: tuple[tuple[Term, int], ...], scope: SymbolicScope) -> None:
        self.terms = terms
        self.scope = scope
        self._hash: int | None = None

    @staticmethod
    def variable(name: str, scope: SymbolicScope) -> DimExpr:
        term: Term = ((_Factor(name), 1),)
        return DimExpr(((term, 1),), scope)

    @staticmethod
    def operation(name: str, operands: Sequence[DimSize], scope: SymbolicScope) -> DimSize:
        term: Term = ((_Factor.of(name, *operands), 1),)
        return _normal({term: 1}, scope)

    @property
    def size(self) -> int:
        return sum(1 + abs(c) * _term_size(t) for t, c in self.terms)

    @property
    def key(self) -> tuple[Any, ...]:
        return (self.size, tuple((_term_key(t), c) for t, c in self.terms))

    def _coeffs(self) -> dict[Term, int]:
        return dict(self.terms)

    def _single_var(self) -> tuple[str | None, int, int]:
        """`(var, coeff, const)` if this is `coeff * var + const`, else `(None, 0, 0)`."""
        var, coeff, const = None, 0, 0
        for term, c in self.terms:
            if term == ():
                const = c
            elif len(term) == 1 and term[0][1] == 1 and term[0][0].var is not None and var is None:
                var, coeff = term[0][0].var, c
            else:
                return None, 0, 0
        return var, coeff, const

    def linear_variable(self) -> tuple[str | None, int, int]:
        """`(var, coeff, const)` if this is `coeff * var + const`, else `(None, 0, 0)`."""
        return self._single_var()

    def variables(self) -> set[str]:
        found: set[str] = set()
        for term, _ in self.terms:
            for f, _exp in term:
                if f.var is not None:
                    found.add(f.var)
                for o in f.operands:
                    if isinstance(o, DimExpr):
                        found |= o.variables()
        return found

    # ---- printing and hashing

    def __str__(self) -> str:
        parts = []
        for term, c in self.terms:
            sign = "+" if c > 0 else "-"
            if term == ():
                parts.append(f"{sign} {abs(c)}")
            elif abs(c) == 1:
                parts.append(f"{sign} {_term_str(term)}")
            else:
                parts.append(f"{sign} {abs(c)}*{_term_str(term)}")
        text = " ".join(parts)
        return text[2:] if text.startswith("+ ") else text

    __repr__ = __str__

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash((self.terms, id(self.scope)))
        return self._hash

    # ---- arithmetic

    def _lift(self, other: Any, when: str) -> DimExpr | None:
        if isinstance(other, DimExpr):
            self.scope._check_same_scope(other, when=when)
            return other
        try:
            value = operator.index(other)
        except TypeError:
            return None
        return DimExpr(((((), value),) if value else ()), self.scope)

    def _combine(self, other: Any, k1: int, k2: int) -> Any:
        lifted = self._lift(other, "for linear combination")
        if lifted is None:
            return NotImplemented
        coeffs = self._coeffs()
        for term, c in coeffs.items():
            coeffs[term] = c * k1
        for term, c in lifted.terms:
            coeffs[term] = coeffs.get(term, 0) + c * k2
        return _normal(coeffs, self.scope)

    def __add__(self, other: Any) -> Any:
        return self._combine(other, 1, 1)

    __radd__ = __add__

    def __sub__(self, other: Any) -> Any:
        return self._combine(other, 1, -1)

    def __rsub__(self, other: Any) -> Any:
        return self._combine(other, -1, 1)

    def __neg__(self) -> Any:
        return self._combine(0, -1, 0)

    def __pos__(self) -> DimExpr:
        return self

    def __mul__(self, other: Any) -> Any:
        lifted = self._lift(other, "for multiplication")
        if lifted is None:
            return NotImplemented
        coeffs: dict[Term, int] = {}
        for t1, c1 in self.terms:
            for t2, c2 in lifted.terms:
                term = _term_mul(t1, t2)
                coeffs[term] = coeffs.get(term, 0) + c1 * c2
        return _normal(coeffs, self.scope)

    __rmul__ = __mul__

    def __pow__(self, power: Any) -> Any:
        if isinstance(power, DimExpr) or power != int(power):
            raise ValueError(
                f"Symbolic dimension cannot be raised to non-integer powers: '{self}' ** '{power}'"
            )
        if power < 0:
            raise ValueError(
                f"Symbolic dimension cannot be raised to negative powers: '{self}' ** '{power}'"
            )
        result: Any = 1
        for _ in range(int(power)):
            result = result * self
        return result

    def divmod(self, divisor: Any) -> tuple[DimSize, DimSize]:
        """Floor division with remainder: exact polynomial division where the leading terms
        divide, else `floordiv(self, divisor)` and `mod(self, divisor)` factors."""
        lifted = self._lift(divisor, "for division")
        if lifted is None or lifted.terms == ():
            raise ZeroDivisionError(f"division of '{self}' by zero")
        constant = _constant(lifted)
        quotient: Any = 0
        dividend: Any = self
        while isinstance(dividend, DimExpr):
            term, count = dividend.terms[0]
            dterm, dcount = lifted.terms[0] if constant is None else ((), constant)
            qterm = _term_div(term, dterm)
            if qterm is None or count % dcount != 0:
                return _opaque(self, divisor)
            q = _normal({qterm: count // dcount}, self.scope)
            quotient = quotient + q
            dividend = dividend - q * divisor
        if constant is None:
            return (quotient, 0) if dividend == 0 else _opaque(self, divisor)
        q, r = divmod(dividend, constant)
        return quotient + q, r

    def __divmod__(self, divisor: Any) -> tuple[DimSize, DimSize]:
        return self.divmod(divisor)

    def __rdivmod__(self, dividend: Any) -> Any:
        lifted = self._lift(dividend, "for division")
        return NotImplemented if lifted is None else lifted.divmod(self)

    def __floordiv__(self, divisor: Any) -> Any:
        return self.divmod(divisor)[0]

    def __rfloordiv__(self, dividend: Any) -> Any:
        lifted = self._lift(dividend, "for division")
        return NotImplemented if lifted is None else lifted.divmod(self)[0]

    def __mod__(self, divisor: Any) -> Any:
        return self.divmod(divisor)[1]

    def __rmod__(self, dividend: Any) -> Any:
        lifted = self._lift(dividend, "for division")
        return NotImplemented if lifted is None else lifted.divmod(self)[1]

    # ---- comparisons

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DimExpr):
            if other.scope is not self.scope:
                return False
        elif not isinstance(other, int):
            return False
        # Equality must not raise (it hashes): expressions are equal when their difference is
        # the constant 0, as JAX's (unequal otherwise, even when it is not decidable).
        diff = self - other
        return not isinstance(diff, DimExpr) and diff == 0

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __ge__(self, other: Any) -> bool:
        return _geq(self, other, f"'{self}' >= '{other}'")

    def __le__(self, other: Any) -> bool:
        return _geq(other, self, f"'{self}' <= '{other}'")

    def __gt__(self, other: Any) -> bool:
        return not _geq(other, self, f"'{self}' > '{other}'")

    def __lt__(self, other: Any) -> bool:
        return not _geq(self, other, f"'{self}' < '{other}'")

    def __int__(self) -> int:
        raise InconclusiveDimensionOperation(
            f"Symbolic dimension '{self}' used in a context that requires a constant"
        )

    # No `__index__`, as JAX's: `operator.index` and `slice.indices` refuse a symbolic
    # dimension with a TypeError, which the indexing code takes as "not a static slice".

    def __jax_array__(self) -> Any:
        """The dimension as a traced integer scalar (JAX's `dim_as_value` primitive)."""
        if not _AS_VALUE:
            raise TypeError(f"symbolic dimension '{self}' used as an array before lax loaded")
        return _AS_VALUE[0](self)

    dimension_as_value = __jax_array__

    def evaluate(self, env: dict[str, int]) -> int:
        """The value for the variables' values in `env`."""
        total = 0
        for term, coeff in self.terms:
            value = coeff
            for factor, exp in term:
                value *= _factor_value(factor, env) ** exp
            total += value
        return total

    def bounds(self) -> Bound:
        """The integers this expression may take, as far as its bounds tell."""
        low: float = 0
        high: float = 0
        for term, c in self.terms:
            t_low, t_high = _term_bounds(term, self.scope)
            a, b = _scale((t_low, t_high), c)
            low, high = low + a, high + b
        return low, high


def _factor_value(factor: _Factor, env: dict[str, int]) -> int:
    if factor.var is not None:
        return env[factor.var]
    ops = [o.evaluate(env) if isinstance(o, DimExpr) else o for o in factor.operands]
    if factor.operation == "max":
        return max(ops)
    if factor.operation == "min":
        return min(ops)
    if factor.operation == "floordiv":
        return ops[0] // ops[1]
    return ops[0] % ops[1]


def _constant(e: DimExpr) -> int | None:
    if len(e.terms) == 1 and e.terms[0][0] == ():
        return e.terms[0][1]
    return None


def _opaque(dividend: DimExpr, divisor: Any) -> tuple[DimSize, DimSize]:
    scope = dividend.scope
    return (
        DimExpr.operation("floordiv", (dividend, divisor), scope),
        DimExpr.operation("mod", (dividend, divisor), scope),
    )


def _normal(coeffs: dict[Term, int], scope: SymbolicScope) -> DimSize:
    """The expression with these coefficients, in normal form (an `int` if constant)."""
    terms = sorted(
        ((t, c) for t, c in coeffs.items() if c != 0), key=lambda tc: _term_key(tc[0]), reverse=True
    )
    if not terms:
        return 0
    if len(terms) == 1 and terms[0][0] == ():
        return terms[0][1]
    return DimExpr(tuple(terms), scope)


def _scale(bound: Bound, k: float) -> Bound:
    a, b = (bound[0] * k if bound[0] else 0), (bound[1] * k if bound[1] else 0)
    return (a, b) if a <= b else (b, a)


def _mul_bounds(x: Bound, y: Bound) -> Bound:
    products = [0 if (p == 0 or q == 0) else p * q for p in (x[0], x[1]) for q in (y[0], y[1])]
    return min(products), max(products)


def _term_bounds(term: Term, scope: SymbolicScope) -> Bound:
    result: Bound = (1, 1)
    for factor, exp in term:
        b = _factor_bounds(factor, scope)
        for _ in range(exp):
            result = _mul_bounds(result, b)
    return result


def _bounds_of(e: DimSize) -> Bound:
    return e.bounds() if isinstance(e, DimExpr) else (e, e)


def _factor_bounds(factor: _Factor, scope: SymbolicScope) -> Bound:
    if factor.var is not None:
        return scope._bounds.get(factor.var, (1, math.inf))
    ops = [_bounds_of(o) for o in factor.operands]
    if factor.operation in ("max", "min"):
        pick = max if factor.operation == "max" else min
        return pick(ops[0][0], ops[1][0]), pick(ops[0][1], ops[1][1])
    (low, high), (d_low, d_high) = ops
    if d_low != d_high or d_low <= 0 or math.isinf(d_low):
        return (-math.inf, math.inf)  # a symbolic or negative divisor: no bounds kept
    d = int(d_low)
    if factor.operation == "mod":
        return (low, high) if low >= 0 and high < d else (0, d - 1)
    return _floor_div(low, d), _floor_div(high, d)


def _floor_div(v: float, d: int) -> float:
    return v if math.isinf(v) else v // d


def _geq(e1: Any, e2: Any, text: str) -> bool:
    """Whether `e1 >= e2` for every value of the variables; raises when bounds do not say."""
    diff = e1 - e2
    if not isinstance(diff, DimExpr):
        return bool(diff >= 0)
    low, high = diff.bounds()
    if low >= 0:
        return True
    if high < 0:
        return False
    for _, constraint in diff.scope._constraints:
        rest = diff - constraint
        if not isinstance(rest, DimExpr):
            if rest >= 0:
                return True
        elif rest.bounds()[0] >= 0:
            return True
    raise InconclusiveDimensionOperation(f"Symbolic dimension comparison {text} is inconclusive.")


def is_symbolic_dim(d: Any) -> bool:
    """Whether `d` is a symbolic dimension (rather than an integer)."""
    return isinstance(d, DimExpr)


def all_variables(shapes: Iterable[Sequence[DimSize]]) -> list[str]:
    """The dimension variables of `shapes`, sorted."""
    found: set[str] = set()
    for shape in shapes:
        for d in shape:
            if isinstance(d, DimExpr):
                found |= d.variables()
    return sorted(found)
