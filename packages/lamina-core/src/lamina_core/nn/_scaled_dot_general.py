"""`jax.nn.scaled_dot_general`: `lax.dot_general` of block-quantized operands, staged as JAX
0.10.2 stages it.

Without `configs` it is `lax.dot_general`. With them (one `BlockScaleConfig` each for lhs, rhs
and the cotangent), each operand is brought to `(batch, rows, contracted)`, quantized per block
of the contracted axis (mxfp8: float8_e4m3fn values over float8_e8m0fnu power-of-two scales,
rounded up; nvfp4: float4_e2m1fn values over float8_e4m3fn scales after dividing by the global
scale), multiplied by `scaled_matmul`'s primitive and reshaped to `dot_general`'s result. A
`custom_vjp` whose backward pass quantizes the cotangent the same way (nvfp4's uses a plain
matmul, and zeroes the gradient where the forward pass clipped: a straight-through estimator).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from typing import Any, Final

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.custom_derivatives import custom_vjp
from lamina_core.ir import dtypes
from lamina_core.nn._scaled_matmul import BlockScaleConfig, _scaled_matmul
from lamina_core.numpy import dtype_of, shape_of

Array = Any
Dims = tuple[tuple[int, ...], tuple[int, ...]]
DimensionNumbers = tuple[tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[int, ...], ...]]

_OUTPUT_TYPES: Final = (np.dtype("float32"), np.dtype("bfloat16"), np.dtype("float16"))


def _view(x: Array, dtype: Any) -> Array:
    """`x.view(dtype)` for a dtype of the same width: a bitcast (none to x's own dtype)."""
    return x if dtype_of(x) == np.dtype(dtype) else lax.bitcast_convert_type(x, dtype)


def _to_3d(x: Array, dims: Dims) -> Array:
    """x with its batch, kept and contracted axes (in that order) each merged into one."""
    contracting, batch = dims
    shape = shape_of(x)
    order = range(len(shape))
    batch_axes = [d for d in order if d in batch]
    kept_axes = [d for d in order if d not in contracting and d not in batch]
    contracted_axes = [d for d in order if d in contracting]

    def size(axes: list[int]) -> int:
        return int(math.prod(shape[d] for d in axes))

    t = jnp.transpose(x, batch_axes + kept_axes + contracted_axes)
    return jnp.reshape(t, (size(batch_axes), size(kept_axes), size(contracted_axes)))


def _dot_shape(
    lhs_shape: Sequence[int], rhs_shape: Sequence[int], lhs_dims: Dims, rhs_dims: Dims
) -> tuple[int, ...]:
    (lhs_contract, lhs_batch), (rhs_contract, rhs_batch) = lhs_dims, rhs_dims
    batch = [d for i, d in enumerate(lhs_shape) if i in lhs_batch]
    lhs_kept = [d for i, d in enumerate(lhs_shape) if i not in lhs_contract and i not in lhs_batch]
    rhs_kept = [d for i, d in enumerate(rhs_shape) if i not in rhs_contract and i not in rhs_batch]
    return tuple(batch + lhs_kept + rhs_kept)


def _e8m0_rounding_up(x: Array) -> Array:
    """The biased exponent of float32 x as uint8, plus one where the mantissa is nonzero (so the
    power of two is >= x), except at the largest exponent and for small subnormals."""
    bits = _view(x.astype(np.float32), np.uint32)
    exponent = bits >> 23
    mantissa = bits & 0x7FFFFF
    round_up = jnp.logical_and(
        jnp.logical_and(mantissa > 0, exponent != 0xFE),
        ~jnp.logical_and(exponent == 0, mantissa <= 0x400000),
    )
    exponent = jnp.where(round_up, exponent + 1, exponent)
    return exponent.astype(np.uint8)


def _e8m0_value(x: Array, dtype: Any) -> Array:
    """2**(x - 127) from a uint8 exponent, with a tiny stand-in for the zero exponent."""
    value = _view(x.astype(np.uint32) << 23, np.float32)
    tiny = 2**-15 if dtype == np.float16 else 2**-127
    value = jnp.where(value == 0, jnp.array(tiny, np.float32), value)
    return value.astype(dtype)


def _quantize(x: Array, config: BlockScaleConfig) -> tuple[Array, Array]:
    """(B, M, K) x as config.data_type values and (B, M, K / block) config.scale_type scales."""
    shape = shape_of(x)
    k, block = shape[-1], config.block_size
    assert k >= block and k % block == 0
    x = x.reshape((*shape[:-1], k // block, block))
    top = dtypes.finfo(config.data_type).max.astype(dtype_of(x))

    def block_scales(values: Array) -> Array:
        return jnp.max(jnp.abs(values), axis=-1, keepdims=True) / top

    if config.mode == "mxfp8":
        assert config.global_scale is None
        assert config.scale_type == dtypes.float8_e8m0fnu
        scales = _e8m0_rounding_up(block_scales(x))
        scaled = x / _e8m0_value(scales, dtype_of(x))
    elif config.mode == "nvfp4":
        assert config.scale_type == dtypes.float8_e4m3fn
        assert dtype_of(config.global_scale) == np.float32
        scale_top = dtypes.finfo(config.scale_type).max.astype(dtype_of(x))
        x = x / config.global_scale
        scales = jnp.clip(block_scales(x), 0, scale_top)
        scales = lax.optimization_barrier(scales.astype(config.scale_type))
        scaled = x / scales.astype(np.float32)
    else:
        raise ValueError(f"Unrecognized mode: {config.mode}.")
    quantized = jnp.clip(scaled, -top, top).astype(config.data_type).reshape(shape)
    scales = _view(jnp.reshape(scales, shape_of(scales)[:-1]), config.scale_type)
    return quantized, scales


def _scaled_matmul_of(a: Array, b: Array, sa: Array, sb: Array, dtype: Any) -> Array:
    assert shape_of(a)[2] == shape_of(b)[2]
    dtype = dtypes.canonicalize_dtype(np.dtype(dtype))
    return _scaled_matmul(a, b, sa, sb, preferred_element_type=dtype)


def _forward(
    lhs: Array,
    rhs: Array,
    dn: DimensionNumbers,
    preferred: Any,
    configs: Sequence[BlockScaleConfig],
) -> Array:
    if preferred is None:
        preferred = dtypes.result_type(lhs, rhs, return_weak_type_flag=False)
    else:
        preferred = dtypes.canonicalize_dtype(np.dtype(preferred))
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dn
    lhs_dims, rhs_dims = (lhs_contract, lhs_batch), (rhs_contract, rhs_batch)
    lhs_3d, rhs_3d = _to_3d(lhs, lhs_dims), _to_3d(rhs, rhs_dims)
    lhs_q, lhs_scales = _quantize(lhs_3d, configs[0])
    rhs_q, rhs_scales = _quantize(rhs_3d, configs[1])
    nvfp4 = configs[0].mode == "nvfp4"
    out = _scaled_matmul_of(
        lhs_q, rhs_q, lhs_scales, rhs_scales, np.float32 if nvfp4 else preferred
    )
    if nvfp4:
        out = out * _staged_mul(configs[0].global_scale, configs[1].global_scale)
        out = out.astype(preferred)
    return jnp.reshape(out, _dot_shape(shape_of(lhs), shape_of(rhs), lhs_dims, rhs_dims))


def _staged_mul(*factors: Any) -> Array:
    """The product, staged even for concrete arrays (JAX stages arithmetic on its arrays)."""
    out = factors[0]
    for f in factors[1:]:
        out = jnp.multiply(out, f)
    return out


def _remaining(axes: Iterable[int], *removed: Sequence[int]) -> list[int]:
    gone = {d for r in removed for d in r}
    return [d for d in axes if d not in gone]


def _consecutive(*lengths: int) -> list[list[int]]:
    out, start = [], 0
    for n in lengths:
        out.append(list(range(start, start + n)))
        start += n
    return out


def _transpose_lhs(
    g: Array,
    x: Array,
    y: Array,
    *,
    dn: DimensionNumbers,
    preferred: Any,
    configs: Sequence[BlockScaleConfig],
    swap_ans: bool = False,
) -> Array:
    """The cotangent of dot_general's lhs x: g against y, quantized (not for nvfp4)."""
    (x_contract, y_contract), (x_batch, y_batch) = dn
    x_kept = _remaining(range(len(shape_of(x))), x_contract, x_batch)
    y_kept = _remaining(range(len(shape_of(y))), y_contract, y_batch)
    if swap_ans:
        ans_batch, ans_y, _ = _consecutive(len(x_batch), len(y_kept), len(x_kept))
    else:
        ans_batch, _, ans_y = _consecutive(len(x_batch), len(x_kept), len(y_kept))
    x_contract_by_y = list(np.take(x_contract, np.argsort(y_contract)))
    out_axes = np.argsort(list(x_batch) + x_kept + x_contract_by_y)
    y_dims: Dims = (tuple(y_kept), tuple(y_batch))
    g_dims: Dims = (tuple(ans_y), tuple(ans_batch))
    y_3d, g_3d = _to_3d(y, y_dims), _to_3d(g, g_dims)
    if configs[0].mode != "nvfp4":
        g_q, g_scales = _quantize(g_3d, configs[0])
        y_q, y_scales = _quantize(y_3d, configs[1])
        out = _scaled_matmul_of(g_q, y_q, g_scales, y_scales, preferred)
    else:
        y_t = jnp.permute_dims(y_3d, (0, 2, 1))
        out = jnp.matmul(g_3d, y_t, preferred_element_type=preferred)
    out = jnp.reshape(out, _dot_shape(shape_of(g), shape_of(y), g_dims, y_dims))
    return lax.transpose(out, tuple(int(a) for a in out_axes))


def _transpose_rhs(
    g: Array,
    x: Array,
    y: Array,
    *,
    dn: DimensionNumbers,
    preferred: Any,
    configs: Sequence[BlockScaleConfig],
) -> Array:
    (x_contract, y_contract), (x_batch, y_batch) = dn
    swapped = ((y_contract, x_contract), (y_batch, x_batch))
    return _transpose_lhs(g, y, x, dn=swapped, preferred=preferred, configs=configs, swap_ans=True)


def _scaled_dot_general_fn(
    lhs: Array,
    rhs: Array,
    dn: DimensionNumbers,
    preferred: Any,
    configs: Sequence[BlockScaleConfig],
) -> Array:
    return _forward(lhs, rhs, dn, preferred, configs)


def _scaled_dot_fwd(
    lhs: Array,
    rhs: Array,
    dn: DimensionNumbers,
    preferred: Any,
    configs: Sequence[BlockScaleConfig],
) -> tuple[Array, tuple[Array, Array]]:
    return _forward(lhs, rhs, dn, preferred, configs), (lhs, rhs)


def _scaled_dot_bwd(
    dn: DimensionNumbers,
    preferred: Any,
    configs: Sequence[BlockScaleConfig],
    res: tuple[Array, Array],
    g: Array,
) -> tuple[Array, Array]:
    lhs, rhs = res
    grad_lhs = _transpose_lhs(
        g, lhs, rhs, dn=dn, preferred=preferred, configs=[configs[2], configs[1]]
    )
    grad_rhs = _transpose_rhs(
        g, lhs, rhs, dn=dn, preferred=preferred, configs=[configs[2], configs[0]]
    )
    if configs[2].mode == "nvfp4":
        # Straight-through estimator: no gradient where the forward pass clipped.
        assert dtype_of(rhs) == dtype_of(lhs)
        top = dtypes.finfo(configs[0].data_type).max.astype(dtype_of(lhs))
        scale_top = dtypes.finfo(configs[0].scale_type).max.astype(dtype_of(lhs))
        lhs_ok = jnp.abs(lhs) <= _staged_mul(configs[0].global_scale, top, scale_top)
        grad_lhs = jnp.where(lhs_ok, grad_lhs, 0)
        rhs_ok = jnp.abs(rhs) <= _staged_mul(configs[1].global_scale, top, scale_top)
        grad_rhs = jnp.where(rhs_ok, grad_rhs, 0)
    return grad_lhs, grad_rhs


for _f, _name in (
    (_scaled_dot_general_fn, "scaled_dot_general_fn"),
    (_scaled_dot_fwd, "scaled_dot_fwd"),
    (_scaled_dot_bwd, "scaled_dot_bwd"),
):
    _f.__name__ = _f.__qualname__ = _name  # the names custom_vjp_call prints, as in JAX
_scaled_dot: Final = custom_vjp(_scaled_dot_general_fn, nondiff_argnums=(2, 3, 4))
_scaled_dot.defvjp(_scaled_dot_fwd, _scaled_dot_bwd)


def _dimension_tuples(dimension_numbers: Any) -> DimensionNumbers:
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    return (tuple(lhs_contract), tuple(rhs_contract)), (tuple(lhs_batch), tuple(rhs_batch))


def _quantized_dot_general(
    lhs: Array,
    rhs: Array,
    dimension_numbers: Any,
    preferred: Any,
    configs: list[BlockScaleConfig] | None,
) -> Array:
    if preferred not in _OUTPUT_TYPES:
        # JAX's message, unformatted placeholder included.
        msg = "Only support preferred_element_type in (f32, bf16, f16), but got {preferred_element_type}"  # noqa: E501
        raise TypeError(msg)
    if configs is None:
        mxfp8 = BlockScaleConfig(
            mode="mxfp8", block_size=32, data_type=dtypes.float8_e4m3fn,
            scale_type=dtypes.float8_e8m0fnu, global_scale=None, infer_only=False,
        )  # fmt: skip
        configs = [mxfp8, mxfp8, mxfp8]
    dn = _dimension_tuples(dimension_numbers)
    contracting, (lhs_batch, rhs_batch) = dn
    lhs_b, rhs_b = lhs, rhs
    if lhs_batch == ():  # a trailing batch axis of size one
        lhs_b = jnp.expand_dims(lhs, axis=len(shape_of(lhs)))
        lhs_batch = (len(shape_of(lhs)),)
    if rhs_batch == ():
        rhs_b = jnp.expand_dims(rhs, axis=len(shape_of(rhs)))
        rhs_batch = (len(shape_of(rhs)),)
    dn_b: DimensionNumbers = (contracting, (lhs_batch, rhs_batch))
    out = _scaled_dot(lhs_b, rhs_b, dn_b, preferred, configs)
    return jnp.squeeze(out, axis=0) if dn_b != dn else out


def scaled_dot_general(
    lhs: Array,
    rhs: Array,
    dimension_numbers: Any,
    preferred_element_type: Any = np.float32,
    configs: list[BlockScaleConfig] | None = None,
    implementation: str | None = None,
) -> Array:
    """`lax.dot_general` of lhs and rhs, each first quantized by its `BlockScaleConfig`
    (`configs` = [lhs, rhs, cotangent], from `get_scaled_dot_general_config`); without
    configs, plain `lax.dot_general`. `implementation` is deprecated and ignored."""
    if implementation is not None:
        warnings.warn(
            "Backend selector, now ignored. The system chooses the backend automatically.",
            DeprecationWarning,
            stacklevel=2,
        )
    if configs is None:
        return lax.dot_general(
            lhs, rhs, dimension_numbers, preferred_element_type=preferred_element_type
        )
    return _quantized_dot_general(lhs, rhs, dimension_numbers, preferred_element_type, configs)
