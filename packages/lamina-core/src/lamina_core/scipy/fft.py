"""`jax.scipy.fft` for Lamina: the type-2 discrete cosine transform and its inverse (`dct`,
`dctn`, `idct`, `idctn`), by FFT as JAX 0.10.2 computes them.

A length-N DCT-II is an FFT of the reordered input (even samples, then the odd ones reversed)
times the twiddle factors `exp(-i pi k / 2N)`, doubled and real. Two axes at once reorder both,
take one 2-D FFT and combine it with its reflection; more axes go two at a time. The inverse
undoes each step: untwiddle, inverse FFT, restore the order. Complex inputs transform their
real and imaginary parts separately. Only type 2 and norms None/"backward"/"ortho" exist, as in
JAX; other types raise NotImplementedError and other norms ValueError, with JAX's messages.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.ir import dtypes
from lamina_core.numpy import canonicalize_axis, dtype_of, ensure_arraylike, shape_of
from lamina_core.scipy._complex import promote_dtypes_complex

Array = Any

__all__ = ["dct", "dctn", "idct", "idctn"]


def _twiddle(n: int, k: Array) -> Array:
    """`exp(-i pi k / 2n)`: the quarter-wave twiddle factors of a length-`n` DCT."""
    n_arr, k = promote_dtypes_complex(n, k)
    return jnp.exp(-0.5j * np.pi * k / n_arr)


def _interleave(x: Array, axis: int) -> Array:
    """The even samples along `axis`, then the odd ones reversed."""
    evens = lax.slice_in_dim(x, None, None, 2, axis)
    odds = lax.rev(lax.slice_in_dim(x, 1, None, 2, axis), (axis,))
    return lax.concatenate([evens, odds], axis)


def _deinterleave(x: Array, axis: int) -> Array:
    """The inverse of `_interleave`."""
    shape = shape_of(x)
    half = math.ceil(shape[axis] / 2)

    def along(s: slice) -> tuple[slice, ...]:
        return tuple(s if i == axis else slice(None) for i in range(len(shape)))

    front = x[along(slice(None, half, 1))]
    back = lax.rev(x[along(slice(half, None, 1))], (axis,))
    out = jnp.zeros(shape, dtype=dtype_of(x))
    out = jnp.at(out)[along(slice(None, None, 2))].set(front)
    return jnp.at(out)[along(slice(1, None, 2))].set(back)


def _ortho(out: Array, axis: int) -> Array:
    """Scale a DCT-II along `axis` to the orthonormal one (the first term by 1/sqrt(4N), the
    others by 1/sqrt(2N))."""
    shape = shape_of(out)
    dtype = dtype_of(out)
    factor = lax.concatenate([lax.full((1,), 4, dtype), lax.full((shape[axis] - 1,), 2, dtype)], 0)
    factor = lax.expand_dims(factor, [a for a in range(len(shape)) if a != axis])
    return out / lax.sqrt(factor * shape[axis])


def _along(k: Array, axis: int, ndim: int) -> Array:
    return lax.expand_dims(k, [a for a in range(ndim) if a != axis])


def _check(name: str, type: int, norm: str | None) -> None:
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm is not None and norm not in ["backward", "ortho"]:
        raise ValueError(f"jax.scipy.fft.{name}: {norm=!r} is not implemented")


def _pad_to(x: Array, sizes: dict[int, int]) -> Array:
    """`x` zero-padded (or cropped) at the end of each axis in `sizes` to that size."""
    shape = shape_of(x)
    config = [(0, sizes[a] - shape[a] if a in sizes else 0, 0) for a in range(len(shape))]
    return lax.pad(x, jnp.array(0, dtype_of(x)), config)


def _is_complex(x: Array) -> bool:
    return dtypes.issubdtype(dtype_of(x), np.complexfloating)


def dct(
    x: Array, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None
) -> Array:
    """The discrete cosine transform of `x` along `axis`, as `scipy.fft.dct`.

    Args:
      x: the input array.
      type: the DCT type; only 2.
      n: the transform's length: `x` is zero-padded or cropped to it along `axis`.
      axis: the axis transformed.
      norm: None or "backward" (unscaled), or "ortho" (orthonormal).

    Returns:
      The transform, in `x`'s floating dtype (complex inputs stay complex).
    """
    (x,) = ensure_arraylike("dct", x)
    _check("dct", type, norm)
    if _is_complex(x):
        return lax.complex(
            dct(jnp.real(x), type=type, n=n, norm=norm, axis=axis),
            dct(jnp.imag(x), type=type, n=n, norm=norm, axis=axis),
        )
    ndim = len(shape_of(x))
    axis = canonicalize_axis(axis, ndim)
    if n is not None:
        x = _pad_to(x, {axis: n})
    size = shape_of(x)[axis]
    v = _interleave(x, axis)
    spectrum = jnp.fft.fft(v, axis=axis)
    k = _along(jnp.arange(size, dtype=dtype_of(jnp.real(spectrum))), axis, ndim)
    out = spectrum * _twiddle(size, k)
    out = 2 * jnp.real(out)
    return _ortho(out, axis) if norm == "ortho" else out


def _dct2(x: Array, axes: Sequence[int], norm: str | None) -> Array:
    """The DCT-II over two axes at once: one 2-D FFT and its reflection along the second."""
    ndim = len(shape_of(x))
    axis1, axis2 = (canonicalize_axis(a, ndim) for a in axes)
    n1, n2 = shape_of(x)[axis1], shape_of(x)[axis2]
    v = _interleave(_interleave(x, axis1), axis2)
    spectrum = jnp.fft.fftn(v, axes=axes)
    k1 = _along(jnp.arange(n1, dtype=dtype_of(spectrum)), axis1, ndim)
    k2 = _along(jnp.arange(n2, dtype=dtype_of(spectrum)), axis2, ndim)
    # In this order (the jaxpr shows it): the first axis's twiddles, the direct term, the
    # reflected one.
    outer = _twiddle(n1, k1)
    direct = _twiddle(n2, k2) * spectrum
    mirrored = _twiddle(n2, -k2) * jnp.roll(jnp.flip(spectrum, axis=axis2), shift=1, axis=axis2)
    out = outer * (direct + mirrored)
    out = 2 * jnp.real(out)
    if norm == "ortho":
        return _ortho(_ortho(out, axis1), axis2)
    return out


def _sizes_and_axes(
    x: Array, s: Sequence[int] | int | None, axes: Sequence[int] | int | None
) -> tuple[list[int] | None, tuple[int, ...]]:
    """`s` as a list and the axes it applies to (by default the last `len(s)`, or all)."""
    ndim = len(shape_of(x))
    sizes: list[int] | None = None
    if s is not None:
        try:
            sizes = list(s)  # type: ignore[arg-type]  # a sequence, or an int (caught)
        except TypeError:
            sizes = [operator.index(s)]  # type: ignore[arg-type]  # an int here
        if len(sizes) > ndim:
            raise ValueError(f"s must have at most x.ndim ({ndim}) elements, got {len(sizes)}")
    if axes is None:
        start = ndim - len(sizes) if sizes is not None else 0
        return sizes, tuple(range(start, ndim))
    if not isinstance(axes, Sequence):
        return sizes, (canonicalize_axis(axes, ndim),)
    canonical = tuple(canonicalize_axis(a, ndim) for a in axes)
    if len(set(canonical)) != len(canonical):
        raise ValueError(f"repeated axis: {canonical}")
    return sizes, canonical


def dctn(
    x: Array,
    type: int = 2,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str | None = None,
) -> Array:
    """The multidimensional discrete cosine transform of `x`, as `scipy.fft.dctn`.

    Args:
      x: the input array.
      type: the DCT type; only 2.
      s: the transform's length along each of `axes` (zero-padding or cropping `x`).
      axes: the axes transformed: by default the last `len(s)`, or all of them.
      norm: None or "backward" (unscaled), or "ortho" (orthonormal).

    Returns:
      The transform, in `x`'s floating dtype (complex inputs stay complex).
    """
    (x,) = ensure_arraylike("dctn", x)
    _check("dctn", type, norm)
    if _is_complex(x):
        return lax.complex(
            dctn(jnp.real(x), type=type, s=s, norm=norm, axes=axes),
            dctn(jnp.imag(x), type=type, s=s, norm=norm, axes=axes),
        )
    sizes, axes = _sizes_and_axes(x, s, axes)
    if len(axes) == 1:
        return dct(x, n=sizes[0] if sizes is not None else None, axis=axes[0], norm=norm)
    if sizes is not None:
        x = _pad_to(x, dict(zip(axes, sizes, strict=False)))
    if len(axes) == 2:
        return _dct2(x, axes=axes, norm=norm)
    for i in range(0, len(axes), 2):
        x = dctn(x, axes=axes[i : i + 2], norm=norm)
    return x


def idct(
    x: Array, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None
) -> Array:
    """The inverse of `dct` (a DCT-III, scaled) along `axis`, as `scipy.fft.idct`.

    Args:
      x: the input array.
      type: the DCT type inverted; only 2.
      n: the transform's length: `x` is zero-padded or cropped to it along `axis`.
      axis: the axis transformed.
      norm: None or "backward", or "ortho"; the inverse of `dct` with the same `norm`.

    Returns:
      The inverse transform, in `x`'s floating dtype (complex inputs stay complex).
    """
    (x,) = ensure_arraylike("idct", x)
    _check("idct", type, norm)
    if _is_complex(x):
        return lax.complex(
            idct(jnp.real(x), type=type, n=n, norm=norm, axis=axis),
            idct(jnp.imag(x), type=type, n=n, norm=norm, axis=axis),
        )
    ndim = len(shape_of(x))
    axis = canonicalize_axis(axis, ndim)
    if n is not None:
        x = _pad_to(x, {axis: n})
    size = shape_of(x)[axis]
    (x,) = jnp.promote_dtypes_inexact(x)
    if norm is None or norm == "backward":
        x = _ortho(x, axis)
    x = _ortho(x, axis)
    k = _along(jnp.arange(size, dtype=dtype_of(x)), axis, ndim)
    twiddle = _twiddle(size, k)
    x = jnp.astype(x, dtype_of(twiddle))
    x = x / _twiddle(size, k)
    x = x * 2 * size
    x = jnp.fft.ifft(x, axis=axis)
    return _deinterleave(jnp.real(x), axis)


def idctn(
    x: Array,
    type: int = 2,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str | None = None,
) -> Array:
    """The inverse of `dctn`: `idct` along each of `axes` in turn.

    Args:
      x: the input array.
      type: the DCT type inverted; only 2.
      s: the transform's length along each of `axes` (zero-padding or cropping `x`).
      axes: the axes transformed: by default the last `len(s)`, or all of them.
      norm: None or "backward", or "ortho"; the inverse of `dctn` with the same `norm`.

    Returns:
      The inverse transform, in `x`'s floating dtype (complex inputs stay complex).
    """
    (x,) = ensure_arraylike("idctn", x)
    _check("idctn", type, norm)
    if _is_complex(x):
        return lax.complex(
            idctn(jnp.real(x), type=type, s=s, norm=norm, axes=axes),
            idctn(jnp.imag(x), type=type, s=s, norm=norm, axes=axes),
        )
    sizes, axes = _sizes_and_axes(x, s, axes)
    if len(axes) == 1:
        return idct(x, n=sizes[0] if sizes is not None else None, axis=axes[0], norm=norm)
    if sizes is not None:
        x = _pad_to(x, dict(zip(axes, sizes, strict=False)))
    for axis in axes:
        x = idct(x, axis=axis, norm=norm)
    return x
