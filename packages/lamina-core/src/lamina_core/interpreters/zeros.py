"""Symbolic zeros and tangent arithmetic shared by every differentiation interpreter.

A tangent or cotangent is an array, a tracer, or `Zero(aval)`: a zero nobody has built yet.
Interpreters keep zeros symbolic as long as they can, so a function that ignores an input
costs nothing and prints nothing for it. `add_any` is the one primitive of this module: the
sum of two tangents, linear in both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from lamina_core.ir import (
    AbstractValue,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    dtypes,
    impl_rules,
)
from lamina_core.trace import CHECKED_SCOPES, current_trace, insert_pvary, typeof


@dataclass(frozen=True, slots=True)
class Zero:
    """A symbolic zero tangent (or cotangent) of type `aval`."""

    aval: AbstractValue

    def __repr__(self) -> str:
        return f"Zero({self.aval.str_short(True)})"


def zero_of(x: Any) -> Zero:
    """The zero tangent of the primal value `x`."""
    return Zero(typeof(x).to_tangent_aval())


add_any_p: Final = Primitive("add_any")


@abstract_eval_rules.register(add_any_p)
def _add_any_abstract_eval(x: AbstractValue, y: AbstractValue) -> AbstractValue:
    return x


@impl_rules.register(add_any_p)
def _add_any_impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.add(x, y)  # type: ignore[no-any-return]  # NumPy ufunc


def add_tangents(x: Any, y: Any) -> Any:
    """`x + y` for tangents, skipping symbolic zeros."""
    if type(x) is Zero:
        return y
    if type(y) is Zero:
        return x
    aval = typeof(x)
    if aval.is_high:  # a hi tangent type adds its own way
        return aval.vspace_add(x, y)  # type: ignore[attr-defined]  # HiType's protocol
    if CHECKED_SCOPES[0]:
        x, y = insert_pvary(x, y)
    return add_any_p.bind(x, y)


ZerosMaker = Callable[[AbstractValue], Any]
_zeros_makers: dict[type, ZerosMaker] = {}


def register_zeros_maker(aval_type: type, make: ZerosMaker) -> None:
    """How to build an array of zeros of an aval type (lax registers `ShapedArray`'s)."""
    _zeros_makers[aval_type] = make


def zeros_like_aval(aval: AbstractValue) -> Any:
    """A concrete or staged array of zeros of type `aval`."""
    make = _zeros_makers.get(type(aval))
    if make is None and aval.is_high:  # a hi tangent type builds its own zero
        return aval.vspace_zero()  # type: ignore[attr-defined]  # HiType's protocol
    if make is None:
        raise TypeError(f"no zeros can be built for values of type {aval.str_short(True)}")
    return make(aval)


_empty_makers: dict[type, ZerosMaker] = {}


def register_empty_maker(aval_type: type, make: ZerosMaker) -> None:
    """How to build a placeholder of an aval type whose contents are never read."""
    _empty_makers[aval_type] = make


def empty_like_aval(aval: AbstractValue) -> Any:
    """A value of type `aval` standing in a slot nothing reads (`empty2`, broadcast)."""
    make = _empty_makers.get(type(aval))
    if make is None:
        raise TypeError(f"no placeholder can be built for values of type {aval.str_short(True)}")
    return make(aval)


def instantiate_zeros(t: Any) -> Any:
    """`t`, with a symbolic zero replaced by an array of zeros.

    A zero built while a rule runs is a computed value, not a constant of the program: the
    trace running the rule is told (`note_computed`), so that linearization passes it to the
    tangent side as a residual, as JAX does with the device array it builds.
    """
    if type(t) is not Zero:
        return t
    value = zeros_like_aval(t.aval)
    note = getattr(current_trace(), "note_computed", None)
    if note is not None:
        note(value)
    return value


def is_float0(aval: AbstractValue) -> bool:
    return isinstance(aval, ShapedArray) and aval.dtype == dtypes.float0
