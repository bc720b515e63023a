"""Differentiation rules of `fft`, as JAX's: the transform is linear, so its tangent is the
transform of the tangent. Complex transforms are symmetric matrices (each its own transpose);
the real transforms transpose into each other, with a mask for the Hermitian half that the
real-to-complex output stores once."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from lamina_core.interpreters import deflinear
from lamina_core.lax import _fft as f
from lamina_core.lax._ad_common import aval_of, full_like
from lamina_core.lax._elementwise import conj, div, mul
from lamina_core.lax._shape import expand_dims
from lamina_core.lax._slicing import dynamic_update_slice
from lamina_core.lax._structural import _convert_element_type
from lamina_core.transforms import Jitted


def _hermitian_mask(like: Any, size: int, n: int, dtype: Any = None) -> Any:
    """Weights of the stored half of a length-`n` real signal's spectrum (`size` entries): 1
    for the zero frequency (and the Nyquist one, for even `n`), 2 for the rest."""
    mask = full_like(like, 2.0, (size,), dtype)
    mask = dynamic_update_slice(mask, full_like(like, 1.0, (1,), dtype), (0,))
    if n % 2 == 0:
        mask = dynamic_update_slice(mask, full_like(like, 1.0, (1,), dtype), (size - 1,))
    return mask


def _weak_scalar(value: float, dtype: Any) -> Any:
    """`value` as a weakly typed scalar of `dtype`, rounded to it first (as `jnp` promotes a
    Python scalar against an array)."""
    return _convert_element_type(np.array(value).astype(dtype).item(), dtype, True)


def _rfft_transpose_body(t: Any, fft_lengths: tuple[int, ...]) -> Any:
    aval = aval_of(t)
    mask = _hermitian_mask(t, aval.shape[-1], fft_lengths[-1])
    mask = expand_dims(mask, range(aval.ndim - 1))
    out = f.fft(div(conj(t), mask), f.FftType.IRFFT, fft_lengths)
    count = _weak_scalar(math.prod(fft_lengths), aval_of(out).dtype)
    return mul(count, out)


# JAX stages this transpose in its own jit, named after its function.
_rfft_transpose_body.__name__ = _rfft_transpose_body.__qualname__ = "_rfft_transpose"
_rfft_transpose: Final = Jitted(_rfft_transpose_body, static_argnums=1)


def _irfft_transpose(t: Any, fft_lengths: tuple[int, ...]) -> Any:
    x = f.fft(t, f.FftType.RFFT, fft_lengths)
    x_aval = aval_of(x)
    mask = _hermitian_mask(t, x_aval.shape[-1], fft_lengths[-1], x_aval.dtype)
    scale = _weak_scalar(1 / math.prod(fft_lengths), x_aval.dtype)
    out = mul(mul(scale, expand_dims(mask, range(x_aval.ndim - 1))), x)
    # JAX's convention for the cotangents of complex values.
    return conj(out)


def _fft_transpose(
    t: Any, operand: Any, *, fft_type: f.FftType, fft_lengths: tuple[int, ...]
) -> Sequence[Any]:
    if fft_type == f.FftType.RFFT:
        return [_rfft_transpose(t, fft_lengths)]
    if fft_type == f.FftType.IRFFT:
        return [_irfft_transpose(t, fft_lengths)]
    return [f.fft(t, fft_type, fft_lengths)]


deflinear(f.fft_p, _fft_transpose)
