"""Reduction primitives over a set of axes: reduce_sum, reduce_max, reduce_min, reduce_prod,
reduce_and, reduce_or."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np

from lamina_core.avals import AbstractValue, ShapedArray
from lamina_core.lax import _checks as c
from lamina_core.lax._types import Array
from lamina_core.primitive import Primitive
from lamina_core.rules import abstract_eval_rules, impl_rules


def reduction(name: str, accepted: frozenset[str], reference: Callable[..., Any]) -> Primitive:
    prim = Primitive(name)

    def abstract_eval(x: AbstractValue, *, axes: Sequence[int], out_sharding: Any) -> ShapedArray:
        aval = c.array_aval(name, x)
        c.check_dtype(name, aval, accepted)
        for axis in axes:
            if not 0 <= axis < aval.ndim:
                raise ValueError(
                    f"{name}: reduction axis {axis} is out of bounds for an operand of shape "
                    f"{aval.shape}"
                )
        shape = tuple(d for i, d in enumerate(aval.shape) if i not in axes)
        return ShapedArray(shape, aval.dtype, aval.weak_type)

    def impl(x: np.ndarray, *, axes: Sequence[int], out_sharding: Any) -> Any:
        return reference(x, axis=tuple(axes))

    abstract_eval_rules.set(prim, abstract_eval)
    impl_rules.set(prim, impl)
    return prim


def _sum(x: np.ndarray, axis: tuple[int, ...]) -> Any:
    return np.sum(x, axis=axis, dtype=x.dtype)


def _prod(x: np.ndarray, axis: tuple[int, ...]) -> Any:
    return np.prod(x, axis=axis, dtype=x.dtype)


reduce_sum_p: Final = reduction("reduce_sum", c.NUM, _sum)
reduce_prod_p: Final = reduction("reduce_prod", c.NUM, _prod)
reduce_max_p: Final = reduction("reduce_max", c.ANY, np.max)
reduce_min_p: Final = reduction("reduce_min", c.ANY, np.min)
reduce_and_p: Final = reduction("reduce_and", c.BOOL | c.INT, np.bitwise_and.reduce)
reduce_or_p: Final = reduction("reduce_or", c.BOOL | c.INT, np.bitwise_or.reduce)


def reduce_sum(operand: Array, axes: Sequence[int]) -> Array:
    return reduce_sum_p.bind(operand, axes=tuple(axes), out_sharding=None)


def reduce_max(operand: Array, axes: Sequence[int]) -> Array:
    return reduce_max_p.bind(operand, axes=tuple(axes), out_sharding=None)


def reduce_min(operand: Array, axes: Sequence[int]) -> Array:
    return reduce_min_p.bind(operand, axes=tuple(axes), out_sharding=None)


def reduce_prod(operand: Array, axes: Sequence[int]) -> Array:
    return reduce_prod_p.bind(operand, axes=tuple(axes), out_sharding=None)


__all__ = [
    "reduce_and_p",
    "reduce_max",
    "reduce_max_p",
    "reduce_min",
    "reduce_min_p",
    "reduce_or_p",
    "reduce_prod",
    "reduce_prod_p",
    "reduce_sum",
    "reduce_sum_p",
]
