"""`lamina.numpy.fft`: discrete Fourier transforms as `jax.numpy.fft`.

Every transform is JAX's composition: the transformed axes move innermost, the operand is
cropped or zero-padded to the requested lengths `s` (or `n`), `lax.fft` runs over up to three
axes at a time, the `norm` factor multiplies the result, and the axes move back. The helpers
`fftfreq`, `rfftfreq`, `fftshift` and `ifftshift` are JAX's formulas.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

import lamina_core.numpy as jnp
from lamina_core.ir import dtypes
from lamina_core.lax import FftType, _to_inexact
from lamina_core.lax import fft as _lax_fft
from lamina_core.numpy._indexing import getitem
from lamina_core.numpy._promote import promote_dtypes_inexact
from lamina_core.numpy._reductions import ensure_arraylike
from lamina_core.numpy._util import Array, ArrayLike, DTypeLike, dtype_of, shape_of

Shape = Sequence[int]


def _norm_factor(s: Array, func_name: str, norm: str) -> Array:
    """The factor `norm` asks for, from the transform's lengths `s` (an array)."""
    if norm == "backward":
        return jnp.array(1)
    (s,) = promote_dtypes_inexact(s)
    inverse = func_name.startswith("i")
    if norm == "ortho":
        root = jnp.sqrt(jnp.prod(s))
        return root if inverse else jnp.true_divide(1, root)
    if norm == "forward":
        count = jnp.prod(s)
        return count if inverse else jnp.true_divide(1, count)
    raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')


def _transform_nd(arr: Array, fft_type: FftType, s: Sequence[int]) -> Array:
    """`lax.fft` over the innermost `len(s)` axes, in steps of at most three axes (XLA's
    limit): two steps of two for four axes, as JAX splits them."""
    if len(s) <= 3:
        return _lax_fft(arr, fft_type, tuple(s))
    step = 2 if len(s) == 4 else 3
    ndim = len(shape_of(arr))
    outer = tuple(range(ndim - len(s), ndim - step))
    moved = tuple(range(ndim - len(s) + step, ndim))
    if fft_type in (FftType.RFFT, FftType.FFT):
        arr = _lax_fft(arr, fft_type, tuple(s)[-step:])
        arr = jnp.moveaxis(arr, outer, moved)
        arr = _transform_nd(arr, FftType.FFT, s[:-step])
        return jnp.moveaxis(arr, moved, outer)
    arr = jnp.moveaxis(arr, outer, moved)
    arr = _transform_nd(arr, FftType.IFFT, s[:-step])
    arr = jnp.moveaxis(arr, moved, outer)
    return _lax_fft(arr, fft_type, tuple(s)[-step:])


def _fft_core(
    func_name: str,
    fft_type: FftType,
    a: ArrayLike,
    s: Shape | None,
    axes: Sequence[int] | None,
    norm: str | None,
) -> Array:
    full_name = f"jax.numpy.fft.{func_name}"
    (arr,) = ensure_arraylike(full_name, a)
    ndim = len(shape_of(arr))
    if s is not None:
        s = tuple(map(operator.index, s))
        if np.any(np.less_equal(s, 0)):
            raise ValueError("Shape should be positive.")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    given_axes = axes
    use_axes: Sequence[int]
    if axes is not None:
        use_axes = axes
    elif s is not None:
        use_axes = range(ndim - len(s), ndim)
    else:
        use_axes = range(ndim)
    if len(use_axes) != len(set(use_axes)):
        raise ValueError(f"{full_name} does not support repeated axes. Got axes {use_axes}.")
    # XLA transforms only the innermost axes.
    if given_axes is not None:
        use_axes = tuple(range(ndim - len(use_axes), ndim))
        arr = jnp.moveaxis(arr, given_axes, use_axes)
    lengths: list[int]
    if s is not None:
        sizes = list(shape_of(arr))
        for axis, size in zip(use_axes, s, strict=True):
            sizes[axis] = size
        if fft_type == FftType.IRFFT:
            sizes[-1] = sizes[-1] // 2 + 1
        arr = getitem(arr, tuple(slice(size) for size in sizes))
        arr = jnp.pad(
            arr, [(0, want - have) for want, have in zip(sizes, shape_of(arr), strict=True)]
        )
        lengths = list(s)
    else:
        shape = shape_of(arr)
        if fft_type == FftType.IRFFT:
            lengths = [shape[axis] for axis in use_axes[:-1]]
            if use_axes:
                lengths.append(max(0, 2 * (shape[use_axes[-1]] - 1)))
        else:
            lengths = [shape[axis] for axis in use_axes]
    transformed = _transform_nd(arr, fft_type, lengths)
    if norm is not None:
        factor = _norm_factor(jnp.array(lengths, dtype=dtype_of(transformed)), func_name, norm)
        transformed = jnp.multiply(transformed, factor)
    if given_axes is not None:
        transformed = jnp.moveaxis(transformed, use_axes, given_axes)
    return transformed


def _check_single_axis(func_name: str, axis: Any) -> None:
    if isinstance(axis, (list, tuple)):
        full_name = f"jax.numpy.fft.{func_name}"
        raise ValueError(
            f"{full_name} does not support multiple axes. Please use {full_name}n. "
            f"Got axis = {axis!r}."
        )


def _fft_core_1d(
    func_name: str,
    fft_type: FftType,
    a: ArrayLike,
    n: int | None,
    axis: int | None,
    norm: str | None,
) -> Array:
    _check_single_axis(func_name, axis)
    return _fft_core(
        func_name,
        fft_type,
        a,
        None if n is None else [n],
        None if axis is None else [axis],
        norm,
    )


def _fft_core_2d(
    func_name: str,
    fft_type: FftType,
    a: ArrayLike,
    s: Shape | None,
    axes: Sequence[int],
    norm: str | None,
) -> Array:
    if len(axes) != 2:
        raise ValueError(f"jax.numpy.fft.{func_name} only supports 2 axes. Got axes = {axes!r}.")
    return _fft_core(func_name, fft_type, a, s, axes, norm)


def fftn(
    a: ArrayLike, s: Shape | None = None, axes: Sequence[int] | None = None, norm: str | None = None
) -> Array:
    """The n-dimensional discrete Fourier transform over `axes` (all, or the last `len(s)`)."""
    return _fft_core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(
    a: ArrayLike, s: Shape | None = None, axes: Sequence[int] | None = None, norm: str | None = None
) -> Array:
    """The n-dimensional inverse discrete Fourier transform."""
    return _fft_core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(
    a: ArrayLike, s: Shape | None = None, axes: Sequence[int] | None = None, norm: str | None = None
) -> Array:
    """The n-dimensional transform of a real array; the last axis keeps `s[-1] // 2 + 1`."""
    return _fft_core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(
    a: ArrayLike, s: Shape | None = None, axes: Sequence[int] | None = None, norm: str | None = None
) -> Array:
    """The inverse of `rfftn`: a real array, `2 * (m - 1)` long on the last axis by default."""
    return _fft_core("irfftn", FftType.IRFFT, a, s, axes, norm)


def fft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The one-dimensional discrete Fourier transform along `axis`."""
    return _fft_core_1d("fft", FftType.FFT, a, n, axis, norm)


def ifft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The one-dimensional inverse discrete Fourier transform along `axis`."""
    return _fft_core_1d("ifft", FftType.IFFT, a, n, axis, norm)


def rfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The one-dimensional transform of a real array: the `n // 2 + 1` non-negative
    frequencies."""
    return _fft_core_1d("rfft", FftType.RFFT, a, n, axis, norm)


def irfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The inverse of `rfft`: a real signal of length `n` (default `2 * (m - 1)`)."""
    return _fft_core_1d("irfft", FftType.IRFFT, a, n, axis, norm)


def hfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The transform of a Hermitian-symmetric signal given by its first half: a real array."""
    conj_a = jnp.conj(a)
    _check_single_axis("hfft", axis)
    length = (shape_of(conj_a)[axis] - 1) * 2 if n is None else n
    out = _fft_core_1d("hfft", FftType.IRFFT, conj_a, n, axis, norm)
    return jnp.multiply(out, length)


def ihfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The inverse of `hfft`: the first half of a Hermitian-symmetric spectrum."""
    _check_single_axis("ihfft", axis)
    arr = jnp.asarray(a)
    length = shape_of(arr)[axis] if n is None else n
    out = _fft_core_1d("ihfft", FftType.RFFT, arr, n, axis, norm)
    return jnp.multiply(jnp.conj(out), 1 / length)


def fft2(
    a: ArrayLike, s: Shape | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None
) -> Array:
    """The two-dimensional discrete Fourier transform over `axes`."""
    return _fft_core_2d("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(
    a: ArrayLike, s: Shape | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None
) -> Array:
    """The two-dimensional inverse discrete Fourier transform over `axes`."""
    return _fft_core_2d("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(
    a: ArrayLike, s: Shape | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None
) -> Array:
    """The two-dimensional transform of a real array over `axes`."""
    return _fft_core_2d("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(
    a: ArrayLike, s: Shape | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None
) -> Array:
    """The inverse of `rfft2`: a real array."""
    return _fft_core_2d("irfft2", FftType.IRFFT, a, s, axes, norm)


def _check_freq_args(func_name: str, n: Any, d: Any) -> None:
    if isinstance(n, (list, tuple)):
        raise ValueError(
            f"The n argument of jax.numpy.fft.{func_name} only takes an int. Got n = {list(n)}."
        )
    if isinstance(d, (list, tuple)):
        raise ValueError(
            f"The d argument of jax.numpy.fft.{func_name} only takes a single value. "
            f"Got d = {list(d)}."
        )


def _spacing_times(d: Any, n: int) -> Any:
    # `d * n` as JAX computes it: on the host for a host spacing, in the program for a traced one.
    return d * n


def _default_float() -> np.dtype:
    return dtypes.canonicalize_dtype(float)


def fftfreq(
    n: int, d: ArrayLike = 1.0, *, dtype: DTypeLike | None = None, device: Any = None
) -> Array:
    """The sample frequencies of an `n`-point transform with sample spacing `d`: `[0, 1, ...,
    n//2 - 1, -n//2, ..., -1] / (d * n)` (for even `n`), computed in the real type of `dtype`
    and returned as `dtype`."""
    # A falsy dtype (None, or a NumPy dtype object, which has no fields) means the default.
    dtype = dtype or _default_float()
    _check_freq_args("fftfreq", n, d)
    compute = dtypes.finfo(_to_inexact(np.dtype(dtype))).dtype
    i = jnp.arange(n, dtype=compute)
    k = jnp.subtract(jnp.remainder(jnp.add(i, n // 2), n), n // 2)
    spacing = jnp.array(_spacing_times(d, n), dtype=compute)
    return jnp.astype(jnp.true_divide(jnp.astype(k, compute), spacing), dtype)


def rfftfreq(
    n: int, d: ArrayLike = 1.0, *, dtype: DTypeLike | None = None, device: Any = None
) -> Array:
    """The sample frequencies of an `n`-point real transform: `[0, 1, ..., n//2] / (d * n)`."""
    dtype = dtype or _default_float()
    _check_freq_args("rfftfreq", n, d)
    count = n // 2 + 1 if n % 2 == 0 else (n - 1) // 2 + 1
    k = jnp.arange(0, count, dtype=dtype)
    return jnp.true_divide(k, jnp.array(_spacing_times(d, n), dtype=dtype))


def _shifted(name: str, x: ArrayLike, axes: int | Sequence[int] | None, sign: int) -> Array:
    (arr,) = ensure_arraylike(name, x)
    shape = shape_of(arr)
    shift: int | list[int]
    if axes is None:
        axes = tuple(range(len(shape)))
        shift = [sign * (dim // 2) for dim in shape]
    elif isinstance(axes, int):
        shift = sign * (shape[axes] // 2)
    else:
        shift = [sign * (shape[ax] // 2) for ax in axes]
    return jnp.roll(arr, shift, axes)


def fftshift(x: ArrayLike, axes: int | Sequence[int] | None = None) -> Array:
    """`x` rolled so the zero frequency is at the centre of `axes` (all by default)."""
    return _shifted("fftshift", x, axes, 1)


def ifftshift(x: ArrayLike, axes: int | Sequence[int] | None = None) -> Array:
    """The inverse of `fftshift`."""
    return _shifted("ifftshift", x, axes, -1)


__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]
