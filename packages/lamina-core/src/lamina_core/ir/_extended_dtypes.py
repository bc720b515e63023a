"""Extended dtypes: element types that are not numbers (PRNG keys, upper layers' types), and
their scalar types for `issubdtype` (`prng_key`, as `jax.dtypes.prng_key`).

Kept apart from `dtypes` (which re-exports every name here) so that module stays one concept:
the numeric dtypes and their promotion.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np


class extended(np.generic):  # JAX's name: a NumPy-style abstract scalar type
    """The scalar type every extended dtype lies under (`issubdtype(key.dtype, extended)`), as
    `jax.dtypes.extended`. Never instantiated."""


class prng_key(extended):  # JAX's name: a NumPy-style abstract scalar type
    """The scalar type of every PRNG key dtype: `issubdtype(key.dtype, prng_key)` holds for
    typed keys (`random.key(0)`), as with `jax.dtypes.prng_key`. Never instantiated."""


@dataclass(frozen=True, slots=True, eq=False)
class ExtendedDType:
    """An element type that is not a number: PRNG keys (`key<fry>`), and whatever upper
    layers define. Identity is intended: one object per registered type.

    Each is stood for, wherever a dtype goes (`ShapedArray.dtype`, host arrays), by a NumPy
    structured dtype with one field named `name` holding the physical element: so every
    shape rule and the NumPy reference evaluator work on such arrays unchanged, and a host
    array of the type is its physical data (`.view(physical_dtype)`). The rules of the type:

    - printing: `name` (`key<fry>[3]`);
    - physical representation and lowering: an array of shape `(*shape, *physical_shape)` and
      dtype `physical_dtype` (`physical_aval`);
    - tangents: `float0`, as for integers (values of the type are not differentiable);
    - batching: a mapped axis is an ordinary axis of the logical shape.
    """

    name: str
    physical_shape: tuple[int, ...]
    physical_dtype: np.dtype[Any]
    dtype: np.dtype[Any]
    """The structured NumPy dtype standing for this type."""
    payload: object = None
    """What the defining layer attaches (a PRNG implementation, for keys)."""
    scalar_type: type[Any] = extended
    """What `issubdtype` places it under (`prng_key` for keys), below `extended`."""


_EXTENDED: Final[dict[np.dtype[Any], ExtendedDType]] = {}


def register_extended_dtype(
    name: str,
    physical_shape: tuple[int, ...],
    physical_dtype: np.dtype[Any],
    payload: object = None,
    scalar_type: type[Any] = extended,
) -> ExtendedDType:
    """Define the extended dtype `name` (once per name; a second call returns the first)."""
    stand_in: np.dtype[Any] = np.dtype([(name, physical_dtype, physical_shape)])
    known = _EXTENDED.get(stand_in)
    if known is not None:
        return known
    ext = ExtendedDType(name, tuple(physical_shape), physical_dtype, stand_in, payload, scalar_type)
    _EXTENDED[stand_in] = ext
    return ext


def extended_dtype_of(dtype: object) -> ExtendedDType | None:
    """The extended dtype `dtype` stands for, or None for numeric dtypes (and non-dtypes)."""
    if not isinstance(dtype, np.dtype) or dtype.kind != "V":
        return None
    return _EXTENDED.get(dtype)
