"""`scaled_dot`: a `dot_general` of block-scaled operands (typically float8 values with one
float8_e8m0fnu scale per block of contracted elements), as `jax.lax.scaled_dot`'s primitive.

Its meaning is its decomposition (`decomposition`): each scale repeated over its block of the
contracting dimensions, operand and scale converted to bfloat16 and multiplied, then
`dot_general` with `preferred_element_type` (bfloat16 by default). JAX lowers the primitive as
a `stablehlo.composite` "xla.scaled_dot" of that decomposition, which XLA's CPU backend
inlines (lamina-mlir's `_rules_scaled_dot`); the NumPy reference evaluates the decomposition.
No derivative (as JAX). Batching moves the mapped axes to the front as a new batch dimension.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from lamina_core.interpreters import AxisData, BatchDim, batching_rules, not_differentiable
from lamina_core.ir import (
    AbstractValue,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    dtypes,
    impl_rules,
)
from lamina_core.lax._batching_common import bdim_at_front
from lamina_core.lax._elementwise import mul
from lamina_core.lax._linalg import dot_general
from lamina_core.lax._shape import expand_dims, reshape
from lamina_core.lax._structural import broadcast_in_dim, convert_element_type
from lamina_core.lax._types import Array
from lamina_core.trace import typeof

scaled_dot_p: Final = Primitive("scaled_dot")


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(x.shape)


def _validate_operand_scale(
    side: str, operand: Any, scale: Any, contracting: Sequence[int]
) -> None:
    for i, size in enumerate(_shape(operand)):
        scale_size = _shape(scale)[i]
        if i in contracting:
            if size % scale_size != 0:
                raise TypeError(
                    f"{side} contracting dim {i} of size {size} must be divisible by its "
                    f"scale's dim size {scale_size}."
                )
            ratio = size // scale_size
            if ratio < 2:
                raise TypeError(
                    f"The ratio of {side} contracting dim {i} to its scale's dim size "
                    f"({ratio}) must be at least 2."
                )
        elif scale_size != size:
            raise TypeError(
                f"{side} dim {i} of size {size} does not match scale dim size {scale_size}."
            )


def _validate(lhs: Any, rhs: Any, lhs_scale: Any, rhs_scale: Any, dimension_numbers: Any) -> None:
    (lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch) = dimension_numbers
    ranks = [len(_shape(lhs)), len(_shape(rhs)), len(_shape(lhs_scale)), len(_shape(rhs_scale))]
    if max(ranks) != min(ranks):
        raise TypeError(
            "All input tensors must have the same rank. Got lhs rank: "
            f"{ranks[0]} rhs rank: {ranks[1]} lhs_scale rank: {ranks[2]} "
            f"rhs_scale rank: {ranks[3]}."
        )
    if len(lhs_batch) != len(rhs_batch):
        raise TypeError(
            "LHS and RHS must have the same number of batch dimensions, got "
            f"{len(lhs_batch)} and {len(rhs_batch)}."
        )
    if len(lhs_contracting) != len(rhs_contracting):
        raise TypeError(
            "LHS and RHS must have the same number of contracting dimensions, got "
            f"{len(lhs_contracting)} and {len(rhs_contracting)}."
        )
    for i, j in zip(lhs_batch, rhs_batch, strict=True):
        sizes = {_shape(lhs)[i], _shape(rhs)[j], _shape(lhs_scale)[i], _shape(rhs_scale)[j]}
        if len(sizes) != 1:
            raise TypeError(
                "All input tensors must have the same batch dimension size for batch dims "
                f"({i}, {j})."
            )
    for i, j in zip(lhs_contracting, rhs_contracting, strict=True):
        if _shape(lhs)[i] != _shape(rhs)[j]:
            raise TypeError(
                f"LHS contracting dim {i} of size {_shape(lhs)[i]} does not match RHS "
                f"contracting dim {j} of size {_shape(rhs)[j]}."
            )
    _validate_operand_scale("LHS", lhs, lhs_scale, lhs_contracting)
    _validate_operand_scale("RHS", rhs, rhs_scale, rhs_contracting)


def _abstract_eval(
    lhs: AbstractValue,
    rhs: AbstractValue,
    lhs_scale: AbstractValue,
    rhs_scale: AbstractValue,
    *,
    dimension_numbers: Any,
    preferred_element_type: Any,
) -> ShapedArray:
    _validate(lhs, rhs, lhs_scale, rhs_scale, dimension_numbers)
    (lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch) = dimension_numbers
    lhs_shape, rhs_shape = _shape(lhs), _shape(rhs)
    lhs_kept = [i for i in range(len(lhs_shape)) if i not in lhs_contracting and i not in lhs_batch]
    rhs_kept = [i for i in range(len(rhs_shape)) if i not in rhs_contracting and i not in rhs_batch]
    shape = (
        *(lhs_shape[i] for i in lhs_batch),
        *(lhs_shape[i] for i in lhs_kept),
        *(rhs_shape[i] for i in rhs_kept),
    )
    dtype = dtypes.bfloat16 if preferred_element_type is None else preferred_element_type
    return ShapedArray(shape, np.dtype(dtype))


def _scale_broadcast(scale: Array, operand_shape: tuple[int, ...], contracting: Any) -> Array:
    for i in contracting:
        scale_shape = list(typeof(scale).shape)  # type: ignore[attr-defined]  # an array
        if scale_shape[i] != operand_shape[i]:
            block = operand_shape[i] // scale_shape[i]
            scale = expand_dims(scale, (i + 1,))
            widened = [*scale_shape[: i + 1], block, *scale_shape[i + 1 :]]
            scale = broadcast_in_dim(scale, tuple(widened), tuple(range(len(widened))))
            merged = [*widened[:i], widened[i] * block, *widened[i + 2 :]]
            scale = reshape(scale, tuple(merged))
    return scale


def decomposition(
    lhs: Array,
    rhs: Array,
    lhs_scale: Array,
    rhs_scale: Array,
    *,
    dimension_numbers: Any,
    preferred_element_type: Any = None,
) -> Array:
    """What `scaled_dot` computes: the scales repeated over their blocks, multiplied into the
    operands in bfloat16, then `dot_general`."""
    (lhs_contracting, rhs_contracting), _ = dimension_numbers
    bf16 = dtypes.bfloat16
    lhs_shape = tuple(typeof(lhs).shape)  # type: ignore[attr-defined]  # an array
    rhs_shape = tuple(typeof(rhs).shape)  # type: ignore[attr-defined]  # an array
    lhs_scale = _scale_broadcast(lhs_scale, lhs_shape, lhs_contracting)
    lhs_scaled = mul(convert_element_type(lhs, bf16), convert_element_type(lhs_scale, bf16))
    rhs_scale = _scale_broadcast(rhs_scale, rhs_shape, rhs_contracting)
    rhs_scaled = mul(convert_element_type(rhs, bf16), convert_element_type(rhs_scale, bf16))
    return dot_general(
        lhs_scaled,
        rhs_scaled,
        dimension_numbers=dimension_numbers,
        preferred_element_type=preferred_element_type,
    )


def _impl(*args: Any, **params: Any) -> Any:
    return decomposition(*args, **params)


def _batching_rule(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], **params: Any
) -> tuple[Any, BatchDim]:
    size = axis_data.size
    lhs, rhs, lhs_scale, rhs_scale = (
        bdim_at_front(x, d, size) for x, d in zip(vals, dims, strict=True)
    )
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = params["dimension_numbers"]
    shifted = (
        (tuple(d + 1 for d in lhs_contract), tuple(d + 1 for d in rhs_contract)),
        ((0, *(d + 1 for d in lhs_batch)), (0, *(d + 1 for d in rhs_batch))),
    )
    out = scaled_dot_p.bind(
        lhs, rhs, lhs_scale, rhs_scale,
        dimension_numbers=shifted, preferred_element_type=params["preferred_element_type"],
    )  # fmt: skip
    return out, 0


abstract_eval_rules.set(scaled_dot_p, _abstract_eval)
impl_rules.set(scaled_dot_p, _impl)
batching_rules.set(scaled_dot_p, _batching_rule)


def _dummy_scale(operand: Array, contracting: Sequence[int]) -> Array:
    shape = list(typeof(operand).shape)  # type: ignore[attr-defined]  # an array
    for d in contracting:
        shape[d] = 1
    ones = broadcast_in_dim(np.array(1.0, dtypes.bfloat16), tuple(shape), ())
    return convert_element_type(ones, dtypes.float8_e8m0fnu)


def scaled_dot(
    lhs: Array,
    rhs: Array,
    *,
    lhs_scale: Array | None = None,
    rhs_scale: Array | None = None,
    dimension_numbers: Any = None,
    preferred_element_type: Any = None,
) -> Array:
    """The `dot_general` of `lhs` and `rhs` dequantized by their block scales (default: ones,
    one block per contracting dimension); by default a batched matmul over the leading axes.
    The result is `preferred_element_type` (default bfloat16)."""
    if dimension_numbers is None:
        n = len(typeof(lhs).shape)  # type: ignore[attr-defined]  # an array
        if n in (0, 1):
            raise TypeError("scaled_dot does not support 0-rank and 1-rank operands.")
        dimension_numbers = (((n - 1,), (n - 2,)), (tuple(range(n - 2)), tuple(range(n - 2))))
    (lhs_contracting, rhs_contracting), _ = dimension_numbers
    if lhs_scale is None:
        lhs_scale = _dummy_scale(lhs, lhs_contracting)
    if rhs_scale is None:
        rhs_scale = _dummy_scale(rhs, rhs_contracting)
    element_type = dtypes.bfloat16 if preferred_element_type is None else preferred_element_type
    element_type = dtypes.canonicalize_dtype(np.dtype(element_type))
    return scaled_dot_p.bind(
        lhs, rhs, lhs_scale, rhs_scale,
        dimension_numbers=dimension_numbers, preferred_element_type=element_type,
    )  # fmt: skip


# JAX 0.10.2 has no derivative for these: differentiating through them raises its error.
not_differentiable(scaled_dot_p)

__all__ = ["scaled_dot"]
