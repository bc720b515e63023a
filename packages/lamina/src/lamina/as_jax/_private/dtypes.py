"""`jax._src.dtypes` under `lamina.as_jax`: what equinox and flax take from JAX's dtypes module,
Lamina's (`lamina.dtypes`) where Lamina has it.

equinox catches `TypePromotionError`. flax's `linen.fp8_ops` defines, at import, an abstract
scalar type under `extended` and an element type subclassing `ExtendedDType` (and reads
`DType`, `finfo` and `supports_inf` in its rules). `ExtendedDType` here is JAX's abstract base
for such library-defined element types: subclasses can be defined and made, but Lamina's
operations take only Lamina's own extended dtypes (PRNG keys, registered with
`lamina.dtypes.register_extended_dtype`), so flax's fp8 meta dtypes are not usable on Lamina.
"""

from __future__ import annotations

import abc
from typing import Any

import numpy as np

from lamina.dtypes import DType, TypePromotionError, extended, finfo, issubdtype

__all__ = [
    "DType",
    "ExtendedDType",
    "TypePromotionError",
    "extended",
    "finfo",
    "supports_inf",
]

_NO_INF: frozenset[str] = frozenset(
    {"float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2fnuz"}
)
"""The floating types with no infinity (their largest values saturate instead)."""


class ExtendedDType(abc.ABC):
    """JAX's abstract base of library-defined element types: a subclass names its scalar type
    (`type`) and its rules (`_rules`)."""

    _rules: Any = None

    @property
    @abc.abstractmethod
    def type(self) -> type:
        """The scalar type `issubdtype` places this element type under."""


def supports_inf(dtype: Any) -> bool:
    """Whether `dtype` has infinities: the floating and complex types, less the float8 types
    that saturate instead."""
    if np.dtype(dtype).name in _NO_INF:
        return False
    return issubdtype(dtype, np.inexact)
