"""Typed Python scalars: weakly typed constants that remember the dtype they were given.

`x * 0.1` with a weakly typed `x` stages a literal whose value prints as Python prints `0.1`
(not as the float32 it rounds to) while its type is `f32`. These subclasses carry that dtype.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np


class TypedInt(int):
    """A Python int with a dtype; a weakly typed integer constant."""

    # No __slots__: CPython does not allow them on subclasses of variable-size int.
    dtype: np.dtype
    weak_type: ClassVar[bool] = True  # so `dtypes.is_weakly_typed` and promotion see it

    def __new__(cls, value: int, dtype: np.dtype) -> TypedInt:
        self = super().__new__(cls, value)
        self.dtype = dtype
        return self

    def __repr__(self) -> str:
        return f"TypedInt({int(self)}, dtype={self.dtype.name})"

    __str__ = int.__repr__

    def __reduce__(self) -> tuple[object, ...]:
        return (TypedInt, (int(self), self.dtype))


class TypedFloat(float):
    """A Python float with a dtype; a weakly typed floating constant."""

    # Instance dict kept, like TypedInt, for one code shape across the three.
    dtype: np.dtype
    weak_type: ClassVar[bool] = True  # so `dtypes.is_weakly_typed` and promotion see it

    def __new__(cls, value: float, dtype: np.dtype) -> TypedFloat:
        self = super().__new__(cls, value)
        self.dtype = dtype
        return self

    def __repr__(self) -> str:
        return f"TypedFloat({float(self)!r}, dtype={self.dtype.name})"

    __str__ = float.__repr__

    def __reduce__(self) -> tuple[object, ...]:
        return (TypedFloat, (float(self), self.dtype))


class TypedComplex(complex):
    """A Python complex with a dtype; a weakly typed complex constant."""

    # Instance dict kept, like TypedInt, for one code shape across the three.
    dtype: np.dtype
    weak_type: ClassVar[bool] = True  # so `dtypes.is_weakly_typed` and promotion see it

    def __new__(cls, value: complex, dtype: np.dtype) -> TypedComplex:
        self = super().__new__(cls, value)
        self.dtype = dtype
        return self

    def __repr__(self) -> str:
        return f"TypedComplex({complex(self)!r}, dtype={self.dtype.name})"

    __str__ = complex.__repr__

    def __reduce__(self) -> tuple[object, ...]:
        return (TypedComplex, (complex(self), self.dtype))


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
