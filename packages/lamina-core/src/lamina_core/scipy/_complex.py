"""Promotion to complex dtypes, as `jax.scipy`'s transforms promote their operands."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core.ir import dtypes

_WIDE = frozenset(np.dtype(t) for t in ("float64", "complex128", "int64", "uint64"))
"""The dtypes whose complex counterpart is complex128 (64-bit integers go to float64 first)."""


def to_complex_dtype(dtype: Any) -> np.dtype:
    """The complex dtype holding `dtype`'s values: complex128 for 64-bit ones, else complex64."""
    return np.dtype(np.complex128 if np.dtype(dtype) in _WIDE else np.complex64)


def promote_dtypes_complex(*args: Any) -> list[Any]:
    """The arguments converted to the complex counterpart of their common dtype."""
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    complex_dtype = to_complex_dtype(dtype)
    return [lax.convert(x, complex_dtype, weak) for x in args]
