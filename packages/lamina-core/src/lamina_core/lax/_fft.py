"""The Fourier transform primitive `fft`: complex-to-complex (forward and inverse), real-to-complex
and complex-to-real transforms over the innermost `len(fft_lengths)` axes.

`fft_type` is an `FftType` (an `IntEnum`, printed as its number, as in JAX's jaxprs) and
`fft_lengths` the transform's logical lengths. `lax.fft` converts its operand to the transform's
input dtype and is staged as `jit[name=fft]`, as JAX's is. The NumPy reference computes with
`numpy.fft` in double precision and rounds to the result dtype.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np

from lamina_core.ir import (
    AbstractValue,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    dtypes,
    impl_rules,
)
from lamina_core.lax import _checks as c
from lamina_core.lax._structural import convert_element_type
from lamina_core.lax._types import Array
from lamina_core.trace import typeof
from lamina_core.transforms import Jitted


class FftType(enum.IntEnum):
    """Which transform `fft` computes."""

    FFT = 0
    """Forward complex-to-complex."""

    IFFT = 1
    """Inverse complex-to-complex."""

    RFFT = 2
    """Forward real-to-complex."""

    IRFFT = 3
    """Inverse complex-to-real."""


fft_p: Final = Primitive("fft")

_BY_NAME: Final = {
    "fft": FftType.FFT,
    "FFT": FftType.FFT,
    "ifft": FftType.IFFT,
    "IFFT": FftType.IFFT,
    "rfft": FftType.RFFT,
    "RFFT": FftType.RFFT,
    "irfft": FftType.IRFFT,
    "IRFFT": FftType.IRFFT,
}

_F32: Final = np.dtype(np.float32)
_F64: Final = np.dtype(np.float64)
_C64: Final = np.dtype(np.complex64)
_C128: Final = np.dtype(np.complex128)


def _complex_of(dtype: np.dtype) -> np.dtype:
    return _C128 if dtype in (_F64, _C128) else _C64


def _real_of(dtype: np.dtype) -> np.dtype:
    return _F64 if dtype in (_F64, _C128) else _F32


def _out_aval(aval: ShapedArray, fft_type: FftType, lengths: tuple[int, ...]) -> ShapedArray:
    """The result's aval, or JAX's `ValueError` for an operand the transform does not fit."""
    k = len(lengths)
    if k > aval.ndim:
        raise ValueError(
            f"FFT input shape {aval.shape} must have at least as many input dimensions as "
            f"fft_lengths {lengths}."
        )
    # Python's `shape[-0:]` is the whole shape: JAX's checks see it so for empty lengths.
    minor = aval.shape[-k:]
    batch = aval.shape[:-k] if k else ()
    if fft_type == FftType.RFFT:
        if aval.dtype not in (_F32, _F64):
            raise ValueError(f"RFFT input must be float32 or float64, got {aval.dtype}")
        if minor != lengths:
            raise ValueError(
                f"RFFT input shape {aval.shape} minor dimensions must be equal to fft_lengths "
                f"{lengths}"
            )
        shape = batch + lengths[:-1] + (lengths[-1] // 2 + 1,)
        return aval.update(shape=shape, dtype=_complex_of(aval.dtype))
    if c.kind_of(aval.dtype) != "c":
        name = "IRFFT" if fft_type == FftType.IRFFT else "FFT"
        raise ValueError(f"{name} input must be complex64 or complex128, got {aval.dtype}")
    if fft_type == FftType.IRFFT:
        if minor[:-1] != lengths[:-1]:
            raise ValueError(
                f"IRFFT input shape {aval.shape} minor dimensions must be equal to all except "
                f"the last fft_length, got fft_lengths={lengths}"
            )
        return aval.update(shape=batch + lengths, dtype=_real_of(aval.dtype))
    if minor != lengths:
        raise ValueError(
            f"FFT input shape {aval.shape} minor dimensions must be equal to fft_lengths {lengths}"
        )
    return aval


@abstract_eval_rules.register(fft_p)
def _fft_abstract_eval(
    x: AbstractValue, *, fft_type: FftType, fft_lengths: tuple[int, ...]
) -> ShapedArray:
    return _out_aval(c.array_aval("fft", x), FftType(fft_type), tuple(fft_lengths))


_NUMPY_TRANSFORMS: Final[dict[FftType, Callable[..., Any]]] = {
    FftType.FFT: np.fft.fftn,
    FftType.IFFT: np.fft.ifftn,
    FftType.RFFT: np.fft.rfftn,
    FftType.IRFFT: np.fft.irfftn,
}


@impl_rules.register(fft_p)
def _fft_impl(x: np.ndarray, *, fft_type: FftType, fft_lengths: tuple[int, ...]) -> np.ndarray:
    x = np.asarray(x)
    lengths = tuple(int(n) for n in fft_lengths)
    out = _out_aval(ShapedArray(x.shape, x.dtype), FftType(fft_type), lengths)
    if fft_type == FftType.IRFFT and x.shape[-1] != lengths[-1] // 2 + 1:
        # XLA rejects this operand when it builds the op; numpy.fft would crop or pad it.
        raise ValueError(
            "IRFFT requires innermost dimension to be compatible with fft_length[-1]/2+1. "
            f"Got: {x.shape[-1]} but fft_length is {', '.join(map(str, lengths))}."
        )
    if 0 in out.shape or 0 in x.shape:
        return np.zeros(out.shape, out.dtype)
    axes = list(range(x.ndim - len(lengths), x.ndim))
    result = _NUMPY_TRANSFORMS[FftType(fft_type)](x, s=list(lengths), axes=axes)
    return np.asarray(result).astype(out.dtype)


def _to_inexact(dtype: np.dtype) -> np.dtype:
    """JAX's `to_inexact_dtype`: booleans and integers to the float of their width class."""
    kind = c.kind_of(dtype)
    if kind in "fc":
        return dtype
    if kind in "iu" and dtype.itemsize == 8:
        return _F64
    return _F32


def _fft_type(fft_type: Any) -> FftType:
    if isinstance(fft_type, str):
        found = _BY_NAME.get(fft_type)
        if found is None:
            raise ValueError(f"Unknown FFT type '{fft_type}'")
        return found
    if isinstance(fft_type, FftType):
        return fft_type
    raise TypeError(f"Unknown FFT type value '{fft_type}'")


def _fft_body(x: Array, fft_type: FftType | str, fft_lengths: Sequence[int]) -> Array:
    kind = _fft_type(fft_type)
    dtype = np.dtype(typeof(x).dtype)  # type: ignore[attr-defined]  # arrays have dtypes
    if kind == FftType.RFFT:
        if c.kind_of(dtype) == "c":
            raise ValueError("only real valued inputs supported for rfft")
        x = convert_element_type(x, _to_inexact(dtype))
    else:
        x = convert_element_type(x, _complex_of(dtypes.canonicalize_dtype(_to_inexact(dtype))))
    if len(fft_lengths) == 0:
        return x  # XLA has no rank-0 transform
    return fft_p.bind(x, fft_type=kind, fft_lengths=tuple(fft_lengths))


# Staged as `jit[name=fft]`, with the transform's type and lengths static, as in JAX.
_fft_body.__name__ = _fft_body.__qualname__ = "fft"
_fft_jit: Final = Jitted(_fft_body, static_argnums=(1, 2))


def fft(x: Array, fft_type: FftType | str, fft_lengths: Sequence[int]) -> Array:
    """The `fft_type` transform of `x` over its innermost `len(fft_lengths)` axes.

    `fft_type` is an `FftType` or its name (`"fft"`, `"IRFFT"`, ...); `fft_lengths` is a tuple.
    Raises JAX's `ValueError`s for a bad type name, a complex `rfft` operand, or lengths that
    do not fit the operand's shape, and its `TypeError` for a `fft_type` of another type.
    """
    result: Array = _fft_jit(x, fft_type, fft_lengths)
    return result


__all__ = [
    "FftType",
    "fft",
    "fft_p",
]
