"""N-dimensional convolution and correlation of `jax.scipy.signal`: `convolve`, `correlate`,
`convolve2d`, `correlate2d` (directly, by `lax.conv_general_dilated`) and `fftconvolve` (by
FFT), as JAX 0.10.2 computes them.

Method selection is JAX's: `convolve(method='fft')` is `fftconvolve`; 'direct' and 'auto' both
convolve directly (JAX does not estimate which is faster). The direct path puts the smaller
operand second, flips it and runs one convolution with the padding each mode needs;
`fftconvolve` multiplies real (or, for complex operands, full) N-D spectra over the full output
shape and slices out the mode's part, vmapping over the axes not in `axes`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Literal

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.numpy import canonicalize_axis, check_arraylike, promote_dtypes_inexact, shape_of
from lamina_core.transforms import vmap

Array = Any
ModeString = Literal["full", "same", "valid"]


def _size(x: Array) -> int:
    return int(np.prod(shape_of(x)))


def fftconvolve(
    in1: Array, in2: Array, mode: ModeString = "full", axes: Sequence[int] | None = None
) -> Array:
    """The convolution of two N-D arrays by FFT, as `scipy.signal.fftconvolve`.

    Args:
      in1: the first operand.
      in2: the second, of the same rank.
      mode: "full" (every overlap), "same" (`in1`'s shape, centred) or "valid" (full overlaps
        only; one operand must be at least as large as the other along every axis).
      axes: the axes convolved (by default all); the others must agree and are mapped over.

    Returns:
      The convolution, in the operands' common floating dtype.

    Raises:
      ValueError: ranks differ, an unknown mode, mapped axes that disagree, or (for "valid")
        operands neither of which fits inside the other.
    """
    check_arraylike("fftconvolve", in1, in2)
    in1, in2 = promote_dtypes_inexact(in1, in2)
    shape1, shape2 = shape_of(in1), shape_of(in2)
    if len(shape1) != len(shape2):
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in ["same", "full", "valid"]:
        raise ValueError("mode must be one of ['same', 'full', 'valid']")
    convolve_: Callable[[Array, Array], Array] = partial(_fftconvolve_unbatched, mode=mode)
    if axes is None:
        return convolve_(in1, in2)
    given = tuple(axes) if isinstance(axes, (tuple, list)) else (axes,)
    conv_axes = tuple(canonicalize_axis(ax, len(shape1)) for ax in given)
    mapped = set(range(len(shape1))) - set(conv_axes)
    if any(shape1[i] != shape2[i] for i in mapped):
        raise ValueError(
            f"mapped axes must have same shape; got in1.shape={shape1} in2.shape={shape2} "
            f"axes={conv_axes}"
        )
    for ax in sorted(mapped):
        convolve_ = vmap(convolve_, in_axes=ax, out_axes=ax)
    return convolve_(in1, in2)


def _fftconvolve_unbatched(in1: Array, in2: Array, mode: str) -> Array:
    shape1, shape2 = shape_of(in1), shape_of(in2)
    full_shape = tuple(s1 + s2 - 1 for s1, s2 in zip(shape1, shape2, strict=True))
    if mode == "valid":
        no_swap = all(s1 >= s2 for s1, s2 in zip(shape1, shape2, strict=True))
        swap = all(s1 <= s2 for s1, s2 in zip(shape1, shape2, strict=True))
        if not (no_swap or swap):
            raise ValueError(
                "For 'valid' mode, One input must be at least as large as the other in every "
                "dimension."
            )
        if swap:
            in1, in2 = in2, in1
            shape1, shape2 = shape2, shape1
    if all(s1 == 1 or s2 == 1 for s1, s2 in zip(shape1, shape2, strict=True)):
        # Nothing overlaps by more than one element: the product is the convolution.
        conv = in1 * in2
    else:
        if jnp.iscomplexobj(in1):
            forward, inverse = jnp.fft.fftn, jnp.fft.ifftn
        else:
            forward, inverse = jnp.fft.rfftn, jnp.fft.irfftn
        spectrum1 = forward(in1, full_shape)
        spectrum2 = forward(in2, full_shape)
        conv = inverse(spectrum1 * spectrum2, full_shape)
    if mode == "full":
        out_shape = full_shape
    elif mode == "same":
        out_shape = shape1
    else:
        out_shape = tuple(s1 - s2 + 1 for s1, s2 in zip(shape1, shape2, strict=True))
    starts = tuple((f - o) // 2 for f, o in zip(full_shape, out_shape, strict=True))
    return lax.dynamic_slice(conv, starts, out_shape)


def _convolve_nd(in1: Array, in2: Array, mode: str, *, precision: Any) -> Array:
    """The direct N-D convolution: one `conv_general_dilated` of the larger operand with the
    smaller one flipped, padded for `mode`."""
    if mode not in ["full", "same", "valid"]:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    if len(shape_of(in1)) != len(shape_of(in2)):
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if _size(in1) == 0 or _size(in2) == 0:
        raise ValueError(
            "zero-size arrays not supported in convolutions, got shapes "
            f"{shape_of(in1)} and {shape_of(in2)}."
        )
    in1, in2 = promote_dtypes_inexact(in1, in2)
    shape1, shape2 = shape_of(in1), shape_of(in2)
    no_swap = all(s1 >= s2 for s1, s2 in zip(shape1, shape2, strict=True))
    swap = all(s1 <= s2 for s1, s2 in zip(shape1, shape2, strict=True))
    if not (no_swap or swap):
        raise ValueError("One input must be smaller than the other in every dimension.")
    # "same" keeps the first operand's shape even when the operands trade places.
    first_shape = shape2
    if swap:
        in1, in2 = in2, in1
    kernel_shape = shape_of(in2)
    in2 = jnp.flip(in2)
    if mode == "valid":
        padding = [(0, 0) for _ in kernel_shape]
    elif mode == "same":
        padding = [
            (s - 1 - (s_o - 1) // 2, s - s_o + (s_o - 1) // 2)
            for s, s_o in zip(kernel_shape, first_shape, strict=True)
        ]
    else:
        padding = [(s - 1, s - 1) for s in kernel_shape]
    strides = tuple(1 for _ in kernel_shape)
    result = lax.conv_general_dilated(
        in1[None, None], in2[None, None], strides, padding, precision=precision
    )
    return result[0, 0]


def convolve(
    in1: Array,
    in2: Array,
    mode: ModeString = "full",
    method: str = "auto",
    precision: Any = None,
) -> Array:
    """The convolution of two N-D arrays, as `scipy.signal.convolve`.

    Args:
      in1: the first operand.
      in2: the second, of the same rank.
      mode: "full", "same" or "valid" (as `fftconvolve`'s).
      method: "fft" (`fftconvolve`), or "direct" or "auto" (both direct, as in JAX).
      precision: the direct convolution's `lax.Precision`.

    Returns:
      The convolution, in the operands' common floating dtype.

    Raises:
      ValueError: an unknown method or mode, ranks differ, an empty operand, or neither
        operand fits inside the other.
    """
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method in ["direct", "auto"]:
        return _convolve_nd(in1, in2, mode, precision=precision)
    raise ValueError(f"Got {method=}; expected 'auto', 'fft', or 'direct'.")


def _check_2d(name: str, in1: Array, in2: Array, boundary: str, fillvalue: float) -> None:
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs.")


def convolve2d(
    in1: Array,
    in2: Array,
    mode: ModeString = "full",
    boundary: str = "fill",
    fillvalue: float = 0,
    precision: Any = None,
) -> Array:
    """The convolution of two 2-D arrays, as `scipy.signal.convolve2d` with zero fill (the only
    boundary JAX supports); `mode` and `precision` as `convolve`'s."""
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _convolve_nd(in1, in2, mode, precision=precision)


def correlate(
    in1: Array,
    in2: Array,
    mode: ModeString = "full",
    method: str = "auto",
    precision: Any = None,
) -> Array:
    """The cross-correlation of two N-D arrays, as `scipy.signal.correlate`: the convolution
    with `in2` conjugated and flipped; arguments as `convolve`'s."""
    return convolve(in1, jnp.flip(jnp.conj(in2)), mode, precision=precision, method=method)


def correlate2d(
    in1: Array,
    in2: Array,
    mode: ModeString = "full",
    boundary: str = "fill",
    fillvalue: float = 0,
    precision: Any = None,
) -> Array:
    """The cross-correlation of two 2-D arrays, as `scipy.signal.correlate2d` with zero fill;
    which operand is flipped follows SciPy's choice for each mode and operand order."""
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    shape1, shape2 = shape_of(in1), shape_of(in2)
    swap = all(s1 <= s2 for s1, s2 in zip(shape1, shape2, strict=True))
    same_shape = all(s1 == s2 for s1, s2 in zip(shape1, shape2, strict=True))
    if mode == "same":
        return jnp.flip(_convolve_nd(jnp.flip(in1), jnp.conj(in2), mode, precision=precision))
    if mode == "valid":
        if swap and not same_shape:
            return _convolve_nd(jnp.flip(in2), jnp.conj(in1), mode, precision=precision)
        return jnp.flip(_convolve_nd(jnp.flip(in1), jnp.conj(in2), mode, precision=precision))
    if swap:
        flipped = _convolve_nd(jnp.flip(in2), jnp.conj(in1), mode, precision=precision)
        return jnp.conj(flipped)
    return jnp.flip(_convolve_nd(jnp.flip(in1), jnp.conj(in2), mode, precision=precision))
