"""Typed Python scalars: weakly typed constants that remember the dtype they were given.

`x * 0.1` with a weakly typed `x` stages a literal whose value prints as Python prints `0.1`
(not as the float32 it rounds to) while its type is `f32`. These subclasses carry that dtype.
"""

from __future__ import annotations

from typing import Any, ClassVar, Generic, Self, TypeVar

import numpy as np

_P = TypeVar("_P", int, float, complex)


class _Typed(Generic[_P]):
    """What the typed scalars share: the dtype, weak typing, the repr and pickling. A subclass
    also derives from its Python type `_python`, which holds the value."""

    # No __slots__: CPython does not allow them on subclasses of variable-size int, and one
    # code shape serves the three.
    dtype: np.dtype
    weak_type: ClassVar[bool] = True  # so `dtypes.is_weakly_typed` and promotion see it
    _python: ClassVar[type[Any]]

    def __new__(cls, value: _P, dtype: np.dtype) -> Self:
        # The next `__new__` in a subclass's MRO is its Python type's.
        self = super().__new__(cls, value)  # type: ignore[call-arg]  # int/float/complex's
        self.dtype = dtype
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._python(self)!r}, dtype={self.dtype.name})"

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self._python(self), self.dtype))


class TypedInt(_Typed[int], int):
    """A Python int with a dtype; a weakly typed integer constant."""

    _python = int
    __str__ = int.__repr__


class TypedFloat(_Typed[float], float):
    """A Python float with a dtype; a weakly typed floating constant."""

    _python = float
    __str__ = float.__repr__


class TypedComplex(_Typed[complex], complex):
    """A Python complex with a dtype; a weakly typed complex constant."""

    _python = complex
    __str__ = complex.__repr__


TypedScalar = TypedInt | TypedFloat | TypedComplex


def typed_scalar(value: bool | int | float | complex, dtype: np.dtype) -> object:
    """`value` converted to `dtype` and kept a Python scalar, as a weak constant is."""
    kind = dtype.kind
    if kind == "b":
        return bool(value)
    if kind in "iu":
        if isinstance(value, complex):
            value = value.real
        return TypedInt(int(value), dtype)
    if kind == "c":
        return TypedComplex(complex(value), dtype)
    if isinstance(value, complex):
        value = value.real
    return TypedFloat(float(value), dtype)
