"""`empty2`: a scalar whose value does not matter, broadcast to fill a slot of a given type.

JAX uses it where a value must exist for typing but is never read: the residual slots a
`cond` branch does not populate when reverse mode merges the branches' residuals. It prints
as `empty2[dtype=float32 memory_space=MemorySpace.Device]` and lowers to a zero constant.
"""

from __future__ import annotations

import enum
from typing import Any, Final

import numpy as np

from lamina_core.interpreters import not_differentiable, register_empty_maker
from lamina_core.ir import (
    AbstractValue,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    dtypes,
    impl_rules,
    register_param_type,
)
from lamina_core.lax._structural import broadcast


class MemorySpace(enum.Enum):
    """Where an array lives, as JAX's enum (only `Device` exists on one CPU)."""

    Device = enum.auto()
    Host = enum.auto()
    Any = enum.auto()

    def __repr__(self) -> str:
        return f"MemorySpace.{self.name}"


register_param_type(MemorySpace)


empty2_p: Final = Primitive("empty2")
not_differentiable(empty2_p)  # no operands: nothing to differentiate


@abstract_eval_rules.register(empty2_p)
def _empty2_abstract_eval(*, dtype: np.dtype[Any], memory_space: MemorySpace) -> ShapedArray:
    return ShapedArray((), dtype, False)


@impl_rules.register(empty2_p)
def _empty2_impl(*, dtype: np.dtype[Any], memory_space: MemorySpace) -> np.ndarray:
    return np.zeros((), dtype)


def empty2(dtype: Any, *, memory_space: MemorySpace = MemorySpace.Device) -> Any:
    """A scalar of `dtype` with unspecified contents (zeros, as lowered)."""
    return empty2_p.bind(dtype=dtypes.canonicalize_dtype(dtype), memory_space=memory_space)


def empty_like_shaped(aval: AbstractValue) -> Any:
    assert isinstance(aval, ShapedArray)
    return broadcast(empty2(aval.dtype), aval.shape)


register_empty_maker(ShapedArray, empty_like_shaped)

__all__ = ["MemorySpace", "empty2", "empty2_p", "empty_like_shaped"]
