"""Scopes of symbolic dimensions (`SymbolicScope`) and the error of undecidable comparisons.

A scope holds the constraints between the dimension variables of the expressions made in it
(`"a >= b"`, `"b <= 16"`): the bounds of single variables that they give, and the differences
they say are nonnegative, which `_dim_expr` uses to decide comparisons.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from lamina_core.ir._dim_expr import DimExpr

Bound = tuple[float, float]
"""A closed interval of integers, with infinities for unbounded sides."""

_HELP: Final = """
This error arises for comparison operations with shapes that
are non-constant, and the result of the operation cannot be represented as
a boolean value for all values of the symbolic dimensions involved.

Please see https://docs.jax.dev/en/latest/export/shape_poly.html#comparison-of-symbolic-dimensions-is-partially-supported
for more details.
"""


class InconclusiveDimensionOperation(Exception):
    """A comparison or conversion of symbolic dimensions whose result depends on their values."""

    def __init__(self, message: str, *, explain: bool = True) -> None:
        # JAX raises two classes of this name: shape_poly's adds the explanation, core's (for
        # messages that carry one already, or say what to do) does not; `explain` picks.
        super().__init__(f"{message}{_HELP}" if explain else message)


class SymbolicScope:
    """The constraints that hold between the dimension variables of expressions made together.

    Identity is intended: expressions of different scopes never mix.

    Args:
        constraints_str: constraints such as `"a >= b"`, `"b <= 16"`.
    """

    def __init__(self, constraints_str: Sequence[str] = ()) -> None:
        if isinstance(constraints_str, str):
            raise ValueError(
                f"The symbolic constraints should be a sequence of strings. Got {constraints_str!r}"
            )
        frame = sys._getframe(1)
        while frame.f_back is not None and frame.f_globals.get("__name__", "").startswith("lamina"):
            frame = frame.f_back
        self._location = f"{frame.f_code.co_filename}:{frame.f_lineno} ({frame.f_code.co_name})"
        self._constraints: list[tuple[str, Any]] = []
        """Each constraint as its text and `lhs - rhs`, which is >= 0."""
        self._bounds: dict[str, Bound] = {}
        """Bounds of single variables that the constraints give."""
        from lamina_core.ir._dim_parse import (
            parse_constraint,  # recursion: parsing makes expressions in this scope
        )

        for text in constraints_str:
            self._add(text, parse_constraint(text, self))

    def _add(self, text: str, differences: Sequence[Any]) -> None:
        for diff in differences:
            self._constraints.append((text, diff))
            if not isinstance(diff, int) and len(diff.terms) <= 2:
                var, coeff, const = diff._single_var()
                if var is not None and coeff in (1, -1):
                    low, high = self._bounds.get(var, (1, math.inf))
                    if coeff == 1:  # var - k >= 0
                        low = max(low, -const)
                    else:  # k - var >= 0
                        high = min(high, const)
                    self._bounds[var] = (low, high)

    @property
    def constraints(self) -> tuple[tuple[str, Any], ...]:
        """Each constraint as its text and a difference that is >= 0 (two for `==`)."""
        return tuple(self._constraints)

    def __str__(self) -> str:
        extras = "".join(f"\n  {text}" for text, _ in dict.fromkeys(self._constraints))
        return f"{id(self)} created at {self._location}{extras}"

    __repr__ = __str__

    def _check_same_scope(self, other: DimExpr, *, when: str) -> None:
        if other.scope is not self:
            raise ValueError(
                f"Invalid mixing of symbolic scopes {when}.\nExpected  scope {self}\n"
                f"and found for '{other}' (unknown) scope {other.scope}\n"
                "See https://docs.jax.dev/en/latest/export/shape_poly.html"
                "#user-specified-symbolic-constraints."
            )
