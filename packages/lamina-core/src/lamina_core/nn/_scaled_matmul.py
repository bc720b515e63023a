"""`jax.nn.scaled_matmul`, `get_scaled_dot_general_config` and `BlockScaleConfig`: a batched
matmul `(B, M, K) x (B, N, K) -> (B, M, N)` of block-quantized operands with per-block scales
(`(B, M, K // block)`, `(B, N, K // block)`), staged as JAX's `scaled_matmul_wrapper` primitive
inside the jitted `_scaled_matmul`.

JAX 0.10.2 lowers that primitive only for CUDA (cuDNN's block-scaled dot) and ROCm (as
`lax.scaled_dot` with batch dimension 0 and contracting dimension 2); on the CPU it raises.
Lamina computes it as JAX's ROCm lowering does, on the reference evaluator and on XLA (lamina-
mlir's `_rules_scaled_dot`): each scale repeated over its block, multiplied into the operand in
bfloat16, then `dot_general` with `preferred_element_type`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Final

import numpy as np

from lamina_core import numpy as jnp
from lamina_core.interpreters import AxisData, BatchDim, batching_rules, not_differentiable
from lamina_core.ir import (
    AbstractValue,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    dtypes,
    impl_rules,
)
from lamina_core.lax import bdim_at_front, decomposition
from lamina_core.trace import typeof
from lamina_core.transforms import Jitted

Array = Any

MATMUL_DIMENSION_NUMBERS: Final = (((2,), (2,)), ((0,), (0,)))
"""`scaled_matmul`'s contraction as `dot_general` dimension numbers: batch 0, contract K."""


@dataclass(slots=True)
class BlockScaleConfig:
    """How `scaled_dot_general` quantizes an operand: the `mode` ('mxfp8' or 'nvfp4'),
    elements per scaled block, the quantized and scale dtypes, an optional global scale, and
    whether the configuration is for inference only."""

    mode: str
    block_size: int
    data_type: Any
    scale_type: Any
    global_scale: Any | None
    infer_only: bool


def get_scaled_dot_general_config(mode: str, global_scale: Any = None) -> BlockScaleConfig:
    """The `BlockScaleConfig` of a quantization mode: 'mxfp8' (float8_e4m3fn values in blocks
    of 32 with float8_e8m0fnu scales) or 'nvfp4' (float4_e2m1fn values in blocks of 16 with
    float8_e4m3fn scales and a float32 global scale, default ones((1,)))."""
    if mode == "nvfp4":
        one = jnp.ones((1,), dtype=np.float32)
        return BlockScaleConfig(
            mode="nvfp4",
            block_size=16,
            data_type=dtypes.float4_e2m1fn,
            scale_type=dtypes.float8_e4m3fn,
            global_scale=one if global_scale is None else global_scale,
            infer_only=False,
        )
    if mode == "mxfp8":
        return BlockScaleConfig(
            mode="mxfp8",
            block_size=32,
            data_type=dtypes.float8_e4m3fn,
            scale_type=dtypes.float8_e8m0fnu,
            global_scale=None,
            infer_only=False,
        )
    raise ValueError(f"Unsupported mode: {mode}")


_FLOAT32: Final = np.dtype("float32")

scaled_matmul_wrapper_p: Final = Primitive("scaled_matmul_wrapper", multiple_results=True)


def _abstract_eval(
    a: AbstractValue, b: AbstractValue, a_scale: AbstractValue, b_scale: AbstractValue,
    *, preferred_element_type: Any,
) -> list[ShapedArray]:  # fmt: skip
    batch, m, _ = a.shape  # type: ignore[attr-defined]  # an array's aval
    _, n, _ = b.shape  # type: ignore[attr-defined]  # an array's aval
    return [ShapedArray((batch, m, n), np.dtype(preferred_element_type))]


def _impl(a: Any, b: Any, a_scale: Any, b_scale: Any, *, preferred_element_type: Any) -> Any:
    out = decomposition(
        a, b, a_scale, b_scale,
        dimension_numbers=MATMUL_DIMENSION_NUMBERS, preferred_element_type=preferred_element_type,
    )  # fmt: skip
    return [out]


def _batching_rule(
    axis_data: AxisData,
    vals: Sequence[Any],
    dims: Sequence[BatchDim],
    *,
    preferred_element_type: Any,
) -> tuple[list[Any], list[BatchDim]]:
    a, b, a_scale, b_scale = (
        bdim_at_front(x, d, axis_data.size) for x, d in zip(vals, dims, strict=True)
    )
    *batch, m, k = typeof(a).shape  # type: ignore[attr-defined]  # an array
    *_, n, _ = typeof(b).shape  # type: ignore[attr-defined]  # an array
    k_blocks = typeof(a_scale).shape[-1]  # type: ignore[attr-defined]  # an array
    size = math.prod(batch)
    a = jnp.reshape(a, (size, m, k))
    a_scale = jnp.reshape(a_scale, (size, m, k_blocks))
    b = jnp.reshape(b, (size, n, k))
    b_scale = jnp.reshape(b_scale, (size, n, k_blocks))
    (out,) = scaled_matmul_wrapper_p.bind(
        a, b, a_scale, b_scale, preferred_element_type=preferred_element_type
    )
    return [jnp.reshape(out, (*batch, m, n))], [0]


abstract_eval_rules.set(scaled_matmul_wrapper_p, _abstract_eval)
impl_rules.set(scaled_matmul_wrapper_p, _impl)
batching_rules.set(scaled_matmul_wrapper_p, _batching_rule)


@partial(Jitted, static_argnames=("preferred_element_type",))
def _scaled_matmul(
    lhs: Array, rhs: Array, lhs_scales: Array, rhs_scales: Array,
    preferred_element_type: Any = _FLOAT32,
) -> Array:  # fmt: skip
    (out,) = scaled_matmul_wrapper_p.bind(
        lhs, rhs, lhs_scales, rhs_scales, preferred_element_type=preferred_element_type
    )
    return out


def _rank(x: Any) -> int:
    return len(np.shape(x)) if not hasattr(x, "shape") else len(x.shape)


def scaled_matmul(
    lhs: Array, rhs: Array, lhs_scales: Array, rhs_scales: Array,
    preferred_element_type: Any = np.float32,
) -> Array:  # fmt: skip
    """`(B, M, K) x (B, N, K) -> (B, M, N)`: the sum over K of `lhs * repeat(lhs_scales)` times
    `rhs * repeat(rhs_scales)`, each scale repeated over its block of K."""
    a, b, a_scales, b_scales = lhs, rhs, lhs_scales, rhs_scales
    if not all(_rank(x) == 3 for x in (a, b, a_scales, b_scales)):
        raise ValueError("scaled_matmul requires all inputs to be 3-dimensional arrays")
    batch_a, m_a, k_a = a.shape
    batch_b, n_b, k_b = b.shape
    if k_a != k_b or batch_a != batch_b:
        raise ValueError(
            "scaled_matmul requires inputs a and b to have matching batch (B) and contract (K) "
            f"dimensions, but got shapes {a.shape} and {b.shape}"
        )
    batch_as, m_as, k_as = a_scales.shape
    batch_bs, n_bs, k_bs = b_scales.shape
    if k_as != k_bs or batch_as != batch_bs:
        raise ValueError(
            "scaled_matmul requires scales to have matching batch (B) and contract (K) "
            f"dimensions, but got shapes {a_scales.shape} and {b_scales.shape}"
        )
    if m_as != m_a or n_bs != n_b:
        raise ValueError(
            "scaled_matmul requires scales to match non-contract dimensions of inputs, but got "
            f"shapes a: {a.shape}, b: {b.shape}, a_scales: {a_scales.shape}, b_scales: "
            f"{b_scales.shape}"
        )
    dtype = dtypes.canonicalize_dtype(np.dtype(preferred_element_type))
    return _scaled_matmul(a, b, a_scales, b_scales, preferred_element_type=dtype)


# JAX 0.10.2 has no derivative for these: differentiating through them raises its error.
not_differentiable(scaled_matmul_wrapper_p)

__all__ = [
    "BlockScaleConfig",
    "get_scaled_dot_general_config",
    "scaled_matmul",
    "scaled_matmul_wrapper_p",
]
