"""The inverse short-time Fourier transform of `jax.scipy.signal` (`istft`), as JAX 0.10.2
computes it: inverse FFTs of the segments, windowed again, overlapped and added, and divided by
the overlapped squared window (where it is not tiny).

Overlap-add is done without a scatter: each segment is cut into step-sized pieces, the pieces
are laid out so that those landing on the same output step line up in one column, and a sum
over the pieces adds them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.numpy import canonicalize_axis, dtype_of, ensure_arraylike, shape_of
from lamina_core.scipy._complex import to_complex_dtype
from lamina_core.scipy._signal_spectral import concrete_int, get_window

Array = Any


def _overlap_and_add(x: Array, step_size: int) -> Array:
    """The frames of `x` (shape `(..., frames, frame_length)`) added at `step_size` apart."""
    ensure_arraylike("_overlap_and_add", x)
    step_size = concrete_int(step_size, "step_size for overlap_and_add")
    if np.ndim(x) < 2:
        raise ValueError("Input must have (..., frames, frame_length) shape.")
    *batch_shape, nframes, segment_len = shape_of(x)
    batch = math.prod(batch_shape)
    x = jnp.reshape(x, (batch, nframes, segment_len))
    output_size = step_size * (nframes - 1) + segment_len
    steps_per_segment = 1 + (segment_len - 1) // step_size
    # Whole steps per segment, then (batch, step in segment, frame, position in step).
    padded_len = steps_per_segment * step_size
    x = jnp.pad(x, ((0, 0), (0, 0), (0, padded_len - segment_len)))
    x = jnp.reshape(x, (batch, nframes, steps_per_segment, step_size))
    x = jnp.transpose(x, (0, 2, 1, 3))
    # Padding the frames to twice their number and dropping one step per row shears the
    # layout: piece s of frame f lands in column f + s, its place in the output.
    x = jnp.pad(x, ((0, 0), (0, 0), (0, nframes), (0, 0)))
    shrunken = shape_of(x)[2] - 1
    x = jnp.reshape(x, (batch, -1))
    x = x[:, : (steps_per_segment * shrunken * step_size)]
    x = jnp.reshape(x, (batch, steps_per_segment, shrunken * step_size))
    x = jnp.sum(x, axis=1)[:, :output_size]
    return jnp.reshape(x, (*batch_shape, -1))


def _window(window: Any, nperseg: int, dtype: np.dtype) -> Array:
    if isinstance(window, str) and window == "hann":
        return jnp.astype(get_window(window, nperseg), dtype)
    if isinstance(window, (str, tuple)):
        return jnp.array(get_window(window, nperseg), dtype=dtype)
    win = jnp.asarray(window)
    if len(shape_of(win)) != 1:
        raise ValueError("window must be 1-D")
    if shape_of(win)[0] != nperseg:
        raise ValueError(f"window must have length of {nperseg}")
    return win


def istft(
    Zxx: Array,
    fs: Any = 1.0,
    window: str = "hann",
    nperseg: int | None = None,
    noverlap: int | None = None,
    nfft: int | None = None,
    input_onesided: bool = True,
    boundary: bool = True,
    time_axis: int = -1,
    freq_axis: int = -2,
) -> tuple[Array, Array]:
    """The inverse short-time Fourier transform, as `scipy.signal.istft`.

    Args:
      Zxx: the STFT, at least 2-D, frequencies along `freq_axis`, segments along `time_axis`.
      fs: the sampling frequency.
      window: the window the STFT used (a name, tuple or 1-D array).
      nperseg: the segment length (default from the number of frequencies).
      noverlap: points shared by neighbouring segments (default half a segment).
      nfft: the FFT length, at least `nperseg`.
      input_onesided: `Zxx` holds only the non-negative frequencies (inverted by `irfft`).
      boundary: the STFT extended the ends; drop half a segment at each end.
      time_axis: the segments' axis.
      freq_axis: the frequencies' axis.

    Returns:
      (sample times, the signal).

    Raises:
      ValueError: `Zxx` under 2-D, equal axes, or inconsistent lengths.
    """
    (Zxx,) = ensure_arraylike("istft", Zxx)
    ndim = np.ndim(Zxx)
    if ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis = canonicalize_axis(freq_axis, ndim)
    time_axis = canonicalize_axis(time_axis, ndim)
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    Zxx = jnp.asarray(Zxx, dtype=to_complex_dtype(dtype_of(Zxx)))
    n_freqs = shape_of(Zxx)[freq_axis]
    n_default = 2 * (n_freqs - 1) if input_onesided else n_freqs
    nperseg_int = concrete_int(nperseg or n_default, "nperseg: segment length of STFT")
    if nperseg_int < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        nfft_int = n_default
        if input_onesided and nperseg_int == n_default + 1:
            nfft_int += 1  # an odd segment length: the one-sided spectrum had no padding
    else:
        nfft_int = concrete_int(nfft, "nfft of STFT")
    if nfft_int < nperseg_int:
        raise ValueError(f"FFT length ({nfft_int}) must be longer than nperseg ({nperseg_int}).")
    noverlap_int = concrete_int(noverlap or nperseg_int // 2, "noverlap of STFT")
    if noverlap_int >= nperseg_int:
        raise ValueError("noverlap must be less than nperseg.")
    nstep = nperseg_int - noverlap_int

    if time_axis != ndim - 1 or freq_axis != ndim - 2:
        outer = tuple(i for i in range(ndim) if i not in {time_axis, freq_axis})
        Zxx = jnp.transpose(Zxx, (*outer, freq_axis, time_axis))
    inverse = jnp.fft.irfft if input_onesided else jnp.fft.ifft
    # As JAX, the transform takes the `nfft` given, not the default computed above.
    xsubs = inverse(Zxx, axis=-2, n=nfft)[..., :nperseg_int, :]
    win = _window(window, nperseg_int, dtype_of(xsubs))
    xsubs = xsubs * jnp.sum(win)  # undoes the STFT's "spectrum" scaling
    sub_ndim = np.ndim(xsubs)
    win = lax.expand_dims(win, (*range(sub_ndim - 2), -1))
    x = _overlap_and_add(jnp.swapaxes(xsubs * win, -2, -1), nstep)
    win_squared = jnp.repeat(win * win, shape_of(xsubs)[-1], axis=-1)
    norm = _overlap_and_add(jnp.swapaxes(win_squared, -2, -1), nstep)
    if boundary:
        half = nperseg_int // 2
        x = x[..., half:-half]
        norm = norm[..., half:-half]
    x = x / jnp.where(norm > 1e-10, norm, 1.0)
    if np.ndim(x) > 1 and time_axis != ndim - 1:
        if freq_axis < time_axis:
            time_axis -= 1
        x = jnp.moveaxis(x, -1, time_axis)
    time = jnp.arange(shape_of(x)[0], dtype=np.finfo(dtype_of(x)).dtype) / fs
    return time, x
