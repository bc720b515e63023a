"""The `jax.Array` methods and properties that are more than a call of the `jax.numpy`
function of the same name with the array first: `compress` (the array is the function's second
argument), `byteswap` and `view` (bit-level reinterpretations), `nbytes`/`itemsize` (static
sizes), `mT`, and `flat` (an error, as JAX's). Tracers and device arrays share them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import lax as _lax
from lamina_core.ir import dtypes as _dtypes
from lamina_core.numpy._creation import zeros
from lamina_core.numpy._index_helpers import copy
from lamina_core.numpy._index_tricks import compress
from lamina_core.numpy._shape import _reshape, squeeze
from lamina_core.numpy._shape_more import matrix_transpose
from lamina_core.numpy._ufuncs import astype, imag, real
from lamina_core.numpy._util import Array, ArrayLike, DTypeLike, dtype_of, shape_of


def compress_method(
    self: Array,
    condition: ArrayLike,
    axis: int | None = None,
    *,
    out: None = None,
    size: int | None = None,
    fill_value: ArrayLike = 0,
) -> Array:
    """`self`'s slices along `axis` where `condition` holds (`jnp.compress(condition, self)`)."""
    return compress(condition, self, axis=axis, out=out, size=size, fill_value=fill_value)


def itemsize(self: Array) -> int:
    """Bytes of one element."""
    return int(dtype_of(self).itemsize)


def nbytes(self: Array) -> int:
    """Bytes of all the elements."""
    return int(np.prod(shape_of(self), dtype=np.int64)) * itemsize(self)


def matrix_transpose_property(self: Array) -> Array:
    """The transpose of the last two axes (`jnp.matrix_transpose`)."""
    return matrix_transpose(self)


def flat(self: Array) -> Any:
    raise NotImplementedError(
        "JAX Arrays do not implement the arr.flat property: consider arr.flatten() instead."
    )


def _bits(dtype: np.dtype) -> int:
    # Sub-byte types (int4, float4_e2m1fn, ...) take a whole byte each in NumPy.
    if dtype == np.bool_:
        return 8
    if _dtypes.issubdtype(dtype, np.integer):
        return int(_dtypes.iinfo(dtype).bits)
    if _dtypes.issubdtype(dtype, np.floating):
        return int(_dtypes.finfo(dtype).bits)
    return int(dtype.itemsize) * 8


def byteswap(self: Array) -> Array:
    """Each element with its bytes in reverse order (same dtype)."""
    dtype = dtype_of(self)
    if _dtypes.issubdtype(dtype, np.complexfloating):
        return _lax.complex(byteswap(real(self)), byteswap(imag(self)))
    if dtype.itemsize == 1:
        return copy(self)
    as_bytes = _lax.bitcast_convert_type(self, np.dtype(np.uint8))
    return _lax.bitcast_convert_type(_lax.rev(as_bytes, (len(shape_of(self)),)), dtype)


def view(self: Array, dtype: DTypeLike | None = None, type: None = None) -> Array:
    """`self`'s bits read as `dtype`; a wider or narrower dtype shrinks or grows the last axis."""
    if type is not None:
        raise NotImplementedError("`type` argument of array.view() is not supported.")
    if dtype is None:
        return self
    new = _dtypes.canonicalize_dtype(dtype)
    old = dtype_of(self)
    shape = shape_of(self)
    bits_in, bits_out = _bits(old), _bits(new)
    if not shape:
        if bits_in != bits_out:
            raise ValueError("view() of a 0d array is only supported if the itemsize is unchanged.")
        return squeeze(view(_lax.expand_dims(self, (0,)), new))
    if (shape[-1] * bits_in) % bits_out != 0:
        raise ValueError(
            "When changing to a larger dtype, its size must be a divisor of the total size in "
            "bytes of the last axis of the array."
        )
    if old == new:
        return self
    # bitcast_convert_type takes neither booleans nor complex numbers: go through their bytes
    # and their interleaved (real, imaginary) parts.
    if old == np.bool_:
        return view(astype(self, np.uint8), new)
    if _dtypes.issubdtype(old, np.complexfloating):
        part = _dtypes.finfo(old).dtype
        pairs = zeros((*shape[:-1], shape[-1] * 2), part)
        pairs = pairs.at[..., 0::2].set(real(self)).at[..., 1::2].set(imag(self))
        return view(pairs, new)
    if new == np.bool_:
        return astype(view(self, np.uint8), np.bool_)
    if _dtypes.issubdtype(new, np.complexfloating):
        parts = astype(view(self, _dtypes.finfo(new).dtype), new)
        return parts[..., 0::2] + 1j * parts[..., 1::2]
    if bits_in < bits_out:
        factor = bits_out // bits_in
        grouped = _reshape(self, (*shape[:-1], shape[-1] // factor, factor))
        return _lax.bitcast_convert_type(grouped, new)
    out = _lax.bitcast_convert_type(self, new)
    if bits_in > bits_out:
        out_shape = shape_of(out)
        return _reshape(out, (*out_shape[:-2], out_shape[-2] * out_shape[-1]))
    return out


__all__: list[str] = []
