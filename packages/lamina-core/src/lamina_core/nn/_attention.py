"""`jax.nn.dot_product_attention`, the XLA implementation, staged as JAX 0.10.2 stages it.

Queries are grouped by key/value head and the per-group core (logits einsum, masks, softmax,
values einsum) is `vmap`ped over the group axis, as JAX does, so the jaxprs print alike.
`implementation='cudnn'` needs a GPU's cuDNN: it raises as JAX does on CPU. The causal and
local-window masks are built from constants, which JAX stages and Lamina folds, so those
jaxprs differ (values agree); bf16/f16 inputs need `lax.DotAlgorithmPreset`, not built yet.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.ir import dtypes
from lamina_core.nn._normalization import logsumexp, softmax
from lamina_core.numpy import dtype_of, shape_of
from lamina_core.transforms import vmap

Array = Any


def _large_negative(dtype: Any) -> Array:
    dtype_max = min(float(dtypes.finfo(dtype).max), float(dtypes.finfo(np.float32).max))
    return jnp.asarray(-0.7 * dtype_max, dtype=dtype)


def _padding_mask_logits(t: int, s: int, q_seqlen: Any, kv_seqlen: Any) -> Array:
    q_mask: Any = True
    kv_mask: Any = True
    if q_seqlen is not None:
        q_mask = jnp.arange(0, t)[None, :, None] < q_seqlen[:, None, None]
    if kv_seqlen is not None:
        kv_mask = jnp.arange(0, s)[None, None, :] < kv_seqlen[:, None, None]
    return jnp.logical_and(q_mask, kv_mask)[:, None, :, :]


def _window_mask(t: int, s: int, window: tuple[int, int]) -> Array:
    query_pos = jnp.array(list(range(t)))  # Lamina's jnp.array takes no range yet
    key_pos = jnp.array(list(range(s)))
    left, right = window
    left_mask = query_pos[..., None] <= key_pos[..., None, :] + left
    right_mask = query_pos[..., None] >= key_pos[..., None, :] - right
    return jnp.logical_and(right_mask, left_mask)[None, None, :, :]


def _apply_masks(
    logits: Array, mask: Any, is_causal: bool, q_seqlen: Any, kv_seqlen: Any, window: Any
) -> Array:
    unmasked = mask is None and q_seqlen is None and kv_seqlen is None and window is None
    if unmasked and not is_causal:
        return logits
    combined = jnp.ones_like(logits, dtype=bool)
    if mask is not None:
        combined = jnp.logical_and(combined, mask)
    t, s = shape_of(logits)[2], shape_of(logits)[3]
    if is_causal:
        # A constant either way; JAX stages its `tril` on it, Lamina (no jnp.tril yet) folds it.
        causal = np.tril(np.ones((t, s), dtype=bool))[None, None, :, :]
        combined = jnp.logical_and(combined, causal)
    if window is not None:
        combined = jnp.logical_and(combined, _window_mask(t, s, window))
    if q_seqlen is not None or kv_seqlen is not None:
        combined = jnp.logical_and(combined, _padding_mask_logits(t, s, q_seqlen, kv_seqlen))
    return jnp.where(combined, logits, _large_negative(dtype_of(logits)))


def _core(
    query: Array,
    key: Array,
    value: Array,
    bias: Any,
    mask: Any,
    is_causal: bool,
    scale: float,
    q_seqlen: Any,
    kv_seqlen: Any,
    window: Any,
    return_residual: bool,
) -> Any:
    logits_dtype = jnp.promote_types(dtype_of(query), np.float32)
    if dtype_of(query) in (np.dtype(np.float16), dtypes.bfloat16):
        raise NotImplementedError("dot_product_attention of 16-bit floats needs DotAlgorithmPreset")
    logits = jnp.einsum("BTNH,BSNH->BNTS", query, key, preferred_element_type=logits_dtype)
    logits = logits * jnp.array(scale, dtype=dtype_of(logits))
    if bias is not None:
        logits = (logits + bias).astype(dtype_of(logits))
    padded = _apply_masks(logits, mask, is_causal, q_seqlen, kv_seqlen, window)
    padded = padded.astype(np.float32)
    probs = softmax(padded, axis=-1).astype(dtype_of(key))
    encoded = jnp.einsum("BNTS,BSNH->BTNH", probs, value)
    if q_seqlen is not None:
        q_mask = (jnp.arange(0, shape_of(encoded)[1])[None, :] < q_seqlen[:, None])[
            :, :, None, None
        ]
        encoded = encoded * q_mask.astype(dtype_of(encoded))
    if return_residual:
        residual = logsumexp(padded, axis=-1).astype(dtype_of(key))
        residual = jnp.transpose(residual, (0, 2, 1))
        return encoded, lax.stop_gradient(residual)
    return encoded


def _xla(
    query: Array, key: Array, value: Array, bias: Any, mask: Any, is_causal: bool,
    scale: float, q_seqlen: Any, kv_seqlen: Any, window: Any, return_residual: bool,
) -> Any:  # fmt: skip
    b, t, n, h = shape_of(query)
    _, _, k, _ = shape_of(key)
    g = n // k
    query = jnp.reshape(query, (b, t, k, g, h))

    def grouped(x: Any) -> Any:
        if x is None:
            return x
        xb, xn, xt, xs = shape_of(x)
        if xn == 1:
            return jnp.broadcast_to(x[:, :, None, :, :], (xb, xn, g, xt, xs))
        return jnp.reshape(x, (xb, k, g, xt, xs))

    # Only the grouped arrays are mapped; the rest reach the core unbatched, as JAX's
    # in_axes=None arguments do (Lamina's vmap wants an axis per array leaf).
    bias, mask = grouped(bias), grouped(mask)

    def per_group(q: Array, *bias_and_mask: Array) -> Any:
        it = iter(bias_and_mask)
        b_g = next(it) if bias is not None else None
        m_g = next(it) if mask is not None else None
        return _core(
            q, key, value, b_g, m_g, is_causal, scale, q_seqlen, kv_seqlen, window,
            return_residual,
        )  # fmt: skip

    mapped = [x for x in (bias, mask) if x is not None]
    out = vmap(per_group, in_axes=(3, *([2] * len(mapped))), out_axes=3)(query, *mapped)
    if return_residual:
        encoded, residual = out
        return jnp.reshape(encoded, (b, t, n, h)), jnp.reshape(residual, (b, t, n))
    return jnp.reshape(out, (b, t, n, h))


def _check(x: Any, shape: Sequence[int], dtype: Any, name: str) -> None:
    if x is None:
        return
    x_shape = shape_of(x)
    if len(x_shape) != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {len(x_shape)}")
    if dtype is not None and dtype_of(x) != dtype:
        raise ValueError(f"{name} dtype should be {dtype}, but got {dtype_of(x)}")
    for want, got in zip(shape, x_shape, strict=True):
        if want != -1 and got != want:
            raise ValueError(f"{name} shape should be {list(shape)}: but got {x_shape}")


def _ensure_4d(x: Any) -> Array:
    x = jnp.asarray(x)
    missing = 4 - len(shape_of(x))
    return jnp.expand_dims(x, axis=tuple(range(missing))) if missing > 0 else x


def dot_product_attention(
    query: Any,
    key: Any,
    value: Any,
    bias: Any = None,
    mask: Any = None,
    *,
    scale: float | None = None,
    is_causal: bool = False,
    query_seq_lengths: Any = None,
    key_value_seq_lengths: Any = None,
    local_window_size: int | tuple[int, int] | None = None,
    implementation: str | None = None,
    return_residual: bool = False,
) -> Any:
    """softmax(q k^T * scale + bias, masked) v over [batch, length, heads, head_dim] arrays."""
    output_shape = shape_of(jnp.asarray(query))
    residual_shape = output_shape[:-1]
    query_arr, key_arr, value_arr = _ensure_4d(query), _ensure_4d(key), _ensure_4d(value)
    bias = _ensure_4d(bias) if bias is not None else None
    mask = _ensure_4d(mask) if mask is not None else None
    if query_seq_lengths is not None:
        query_seq_lengths = jnp.asarray(query_seq_lengths)
    if key_value_seq_lengths is not None:
        key_value_seq_lengths = jnp.asarray(key_value_seq_lengths)
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)
    b, s, k, h = shape_of(key_arr)
    _check(value_arr, [b, s, k, h], dtype_of(key_arr), "value")
    _check(query_arr, [b, -1, -1, h], dtype_of(key_arr), "query")
    _check(mask, [-1] * 4, np.dtype(bool), "mask")
    _check(bias, [-1] * 4, None, "bias")
    _check(query_seq_lengths, [b], np.dtype("int32"), "query_seq_lengths")
    _check(key_value_seq_lengths, [b], np.dtype("int32"), "key_value_seq_lengths")
    if shape_of(query_arr)[-2] % k != 0:
        raise ValueError(
            "The number of query heads must be a multiple of key/value heads, but got "
            f"{shape_of(query_arr)[-2]} vs {k}"
        )
    scale_val = (1.0 / np.sqrt(h)) if scale is None else scale
    if implementation == "cudnn":
        raise RuntimeError("cuDNN is not detected.")
    if implementation not in ("xla", None):
        raise ValueError(f"Unsupported implementation option: {implementation}")
    out = _xla(
        query_arr, key_arr, value_arr, bias, mask, is_causal, scale_val,
        query_seq_lengths, key_value_seq_lengths, local_window_size, return_residual,
    )  # fmt: skip
    if return_residual:
        encoded, residual = out
        return jnp.reshape(encoded, output_shape), jnp.reshape(residual, residual_shape)
    return jnp.reshape(out, output_shape)
