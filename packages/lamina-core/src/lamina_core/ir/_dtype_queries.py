"""`itemsize_bits` and `scalar_type_of`: questions about dtypes that `jax.dtypes` answers
beyond NumPy's (sub-byte integers, ml_dtypes' floats)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core.ir.dtypes import (
    DTypeLike,
    _scalar_kind,
    dtype,
    finfo,
    iinfo,
    issubdtype,
)


def itemsize_bits(dtype_like: DTypeLike | None) -> int:
    """Bits per element: 4 for int4 (NumPy's itemsize says a byte), 8 for bool (its layout)."""
    if dtype_like is None:
        raise ValueError("dtype cannot be None.")
    dt = np.dtype(dtype_like)
    if dt == np.dtype(bool):
        return 8
    if issubdtype(dt, np.integer):
        return int(iinfo(dt).bits)
    if issubdtype(dt, np.floating):
        return int(finfo(dt).bits)
    if issubdtype(dt, np.complexfloating):
        return 2 * int(finfo(dt).bits)
    raise ValueError(f"unexpected input: dtype={dtype_like!r}")


def scalar_type_of(x: Any) -> type:
    """The Python scalar type (`bool`, `int`, `float`, `complex`) of a value's dtype."""
    dt = dtype(x)
    kind = bool if issubdtype(dt, np.bool_) else _scalar_kind(dt)
    if kind is None:
        raise TypeError(f"Invalid scalar value {x}")
    return kind
