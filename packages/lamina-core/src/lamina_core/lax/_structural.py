"""Type conversion and shape primitives: convert_element_type, broadcast_in_dim."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from lamina_core.avals import AbstractValue, ShapedArray
from lamina_core.lax import _checks as c
from lamina_core.pretty import hide_params
from lamina_core.primitive import Primitive
from lamina_core.rules import abstract_eval_rules, impl_rules

convert_element_type_p: Final = Primitive("convert_element_type")
broadcast_in_dim_p: Final = Primitive("broadcast_in_dim")


@abstract_eval_rules.register(convert_element_type_p)
def _convert_element_type_abstract_eval(x: AbstractValue, *, new_dtype: np.dtype,
                                        weak_type: bool, sharding: Any) -> ShapedArray:  # fmt: skip
    aval = c.array_aval("convert_element_type", x)
    return ShapedArray(aval.shape, new_dtype, weak_type)


@impl_rules.register(convert_element_type_p)
def _convert_element_type_impl(x: np.ndarray, *, new_dtype: np.dtype, weak_type: bool,
                               sharding: Any) -> np.ndarray:  # fmt: skip
    if new_dtype == np.dtype(bool):
        nonzero: np.ndarray = np.not_equal(x, 0)
        return nonzero
    if np.result_type(x).kind == "c" and new_dtype.kind != "c":
        x = np.real(x)
    with np.errstate(invalid="ignore", over="ignore"):
        converted: np.ndarray = np.asarray(x).astype(new_dtype)
    return converted


hide_params(convert_element_type_p, lambda k, v: k == "sharding")


@abstract_eval_rules.register(broadcast_in_dim_p)
def _broadcast_in_dim_abstract_eval(x: AbstractValue, *, shape: Sequence[int],
                                    broadcast_dimensions: Sequence[int],
                                    sharding: Any) -> ShapedArray:  # fmt: skip
    aval = c.array_aval("broadcast_in_dim", x)
    shape = tuple(shape)
    if aval.ndim != len(broadcast_dimensions):
        raise TypeError(
            f"broadcast_in_dim broadcast_dimensions must have length equal to operand ndim; got "
            f"broadcast_dimensions {tuple(broadcast_dimensions)} for operand ndim {aval.ndim}."
        )
    if len(shape) < aval.ndim:
        raise TypeError(
            f"broadcast_in_dim target broadcast shape must have equal or higher rank to the "
            f"operand shape; got operand ndim {aval.ndim} and target broadcast ndim {len(shape)}."
        )
    for i, dim in enumerate(broadcast_dimensions):
        if not 0 <= dim < len(shape):
            raise TypeError(
                f"broadcast_in_dim broadcast_dimensions must be in range [0, {len(shape)}); "
                f"got {tuple(broadcast_dimensions)}."
            )
        if aval.shape[i] not in (1, shape[dim]):
            raise TypeError(
                f"broadcast_in_dim operand dimension sizes must either be 1, or be equal to their "
                f"corresponding dimensions in the target broadcast shape; got operand of shape "
                f"{aval.shape}, target broadcast shape {shape}, broadcast_dimensions "
                f"{tuple(broadcast_dimensions)}"
            )
    if any(a >= b for a, b in zip(broadcast_dimensions, broadcast_dimensions[1:], strict=False)):
        raise TypeError(
            f"broadcast_in_dim broadcast_dimensions must be strictly increasing; got "
            f"broadcast_dimensions {tuple(broadcast_dimensions)}"
        )
    return ShapedArray(shape, aval.dtype, aval.weak_type)


@impl_rules.register(broadcast_in_dim_p)
def _broadcast_in_dim_impl(x: np.ndarray, *, shape: Sequence[int],
                           broadcast_dimensions: Sequence[int], sharding: Any) -> np.ndarray:  # fmt: skip
    expanded = [1] * len(shape)
    for i, dim in enumerate(broadcast_dimensions):
        expanded[dim] = np.shape(x)[i]
    return np.broadcast_to(np.reshape(x, expanded), tuple(shape)).copy()


hide_params(
    broadcast_in_dim_p,
    lambda k, v: k in ("shape", "sharding") or (k == "broadcast_dimensions" and not v),
)
