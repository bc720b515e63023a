"""Windowed FFTs of `jax.scipy.signal`: `detrend`, `stft`, `csd` and `welch`, as JAX 0.10.2
computes them.

All three spectral functions share `_spectral_helper`, which follows SciPy's: the signal axis
moves last, the ends are extended by the `boundary` rule and the tail zero-padded to whole
segments, overlapping segments are cut out (a vmapped dynamic slice), detrended, windowed and
transformed (one-sided `rfft` for real data, else `fft`), and scaled to a density or spectrum.
Windows other than "hann" come from SciPy's `get_window`, an optional dependency, as in JAX.
"""

from __future__ import annotations

import itertools
import operator
import warnings
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.numpy import (
    canonicalize_axis,
    check_arraylike,
    dtype_of,
    promote_dtypes_inexact,
    shape_of,
)
from lamina_core.scipy._complex import promote_dtypes_complex, to_complex_dtype
from lamina_core.trace import concrete_or_error
from lamina_core.transforms import vmap

Array = Any
Detrend = Callable[[Array], Array]


def concrete_int(value: Any, context: str) -> int:
    """`int(value)`, or JAX's ConcretizationTypeError naming `context` if it is traced."""
    return int(concrete_or_error(value, context))


def detrend(
    data: Any,
    axis: int = -1,
    type: str = "linear",
    bp: int | Sequence[int] | np.ndarray = 0,
    overwrite_data: None = None,
) -> Array:
    """`data` less its mean ("constant") or its least-squares line ("linear", fitted piecewise
    between the breakpoints `bp`) along `axis`, as `scipy.signal.detrend`.

    Raises:
      NotImplementedError: `overwrite_data` is given.
      ValueError: an unknown `type`, or breakpoints outside the data.
    """
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ["constant", "linear"]:
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    (arr,) = promote_dtypes_inexact(jnp.asarray(data))
    if type == "constant":
        return arr - jnp.mean(arr, axis, keepdims=True)
    n = shape_of(arr)[axis]
    breaks = np.sort(np.unique(np.r_[0, bp, n]))
    if breaks[0] < 0 or breaks[-1] > n:
        raise ValueError(
            "Breakpoints must be non-negative and less than length of data along given axis."
        )
    arr = jnp.moveaxis(arr, axis, 0)
    shape = shape_of(arr)
    arr = jnp.reshape(arr, (n, -1))
    dtype = dtype_of(arr)
    for start, stop in itertools.pairwise(breaks):
        points = stop - start
        design = jnp.vstack(
            [
                jnp.ones(points, dtype=dtype),
                jnp.arange(1, points + 1, dtype=dtype) / points.astype(dtype),
            ]
        ).T
        rows = slice(start, stop)
        coef, *_ = jnp.linalg.lstsq(design, arr[rows])
        fit = jnp.matmul(design, coef, precision=lax.Precision.HIGHEST)
        arr = jnp.at(arr)[rows].add(-fit)
    return jnp.moveaxis(jnp.reshape(arr, shape), 0, axis)


def get_window(window: Any, nperseg: int) -> Array:
    """The window `window` names (a string or tuple) of length `nperseg`: "hann" here, others
    from SciPy, which Lamina (as JAX) needs only for them."""
    if isinstance(window, str) and window == "hann":
        if nperseg == 1:
            return jnp.array([1.0])
        return jnp.sin(jnp.linspace(0, np.pi, nperseg, endpoint=False)) ** 2
    try:
        # An optional dependency, imported only when such a window is asked for.
        from scipy.signal import get_window as scipy_get_window
    except ImportError as err:
        raise ImportError(f"scipy must be available to use {window=}") from err
    return scipy_get_window(window, nperseg)


def triage_segments(
    window: Any, nperseg: int | None, input_length: int, dtype: Any
) -> tuple[Array, int]:
    """The window array and segment length: a named window of `nperseg` points (the whole
    input by default, and at most that), or an array window whose length is the segment's."""
    if isinstance(window, (str, tuple)):
        length = input_length if nperseg is None else int(nperseg)
        if length > input_length:
            warnings.warn(
                f"nperseg={length} is greater than input_length={input_length},"
                f" using nperseg={input_length}",
                stacklevel=4,
            )
            length = input_length
        win = jnp.array(get_window(window, length), dtype=dtype)
        return win, length
    win = jnp.asarray(window, dtype=dtype)
    size = int(np.prod(shape_of(win)))
    length = size if nperseg is None else int(nperseg)
    if len(shape_of(win)) != 1:
        raise ValueError("window must be 1-D")
    if input_length < size:
        raise ValueError("window is longer than input signal")
    if length != size:
        raise ValueError("value specified for nperseg is different from length of window")
    return win, length


def median_bias(n: int) -> Array:
    """The bias of the median of `n` periodograms relative to their mean (Allen et al.,
    FINDCHIRP, appendix B)."""
    ii_2 = jnp.arange(2.0, n, 2)
    return 1 + jnp.sum(1.0 / (ii_2 + 1) - 1.0 / ii_2)


def odd_ext(x: Array, n: int, axis: int = -1) -> Array:
    """`x` extended by `n` points at each end along `axis`, reflected through the end points."""
    if n < 1:
        return x
    if n > shape_of(x)[axis] - 1:
        raise ValueError(
            f"The extension length n ({n}) is too big. "
            f"It must not exceed x.shape[axis]-1, which is {shape_of(x)[axis] - 1}."
        )
    left_end = lax.slice_in_dim(x, 0, 1, axis=axis)
    left_ext = jnp.flip(lax.slice_in_dim(x, 1, n + 1, axis=axis), axis=axis)
    right_end = lax.slice_in_dim(x, -1, None, axis=axis)
    right_ext = jnp.flip(lax.slice_in_dim(x, -(n + 1), -1, axis=axis), axis=axis)
    return jnp.concatenate((2 * left_end - left_ext, x, 2 * right_end - right_ext), axis=axis)


def _padder(mode: str, **kwargs: Any) -> Callable[..., Array]:
    def pad(x: Array, n: int, axis: int = -1) -> Array:
        widths = [(0, 0) for _ in shape_of(x)]
        widths[axis] = (n, n)
        return jnp.pad(x, widths, mode, **kwargs)

    return pad


_BOUNDARIES: dict[str | None, Callable[..., Array]] = {
    "even": _padder("reflect"),
    "odd": odd_ext,
    "constant": _padder("edge"),
    "zeros": _padder("constant", constant_values=0.0),
    None: lambda x, *args, **kwargs: x,
}
"""How `boundary` extends the signal by half a segment at each end."""


def _segments_fft(
    x: Array, win: Array, detrend_func: Detrend, nperseg: int, noverlap: int, nfft: int, sides: str
) -> Array:
    """The windowed transforms of `x`'s overlapping segments, along a new second-last axis."""
    if dtype_of(x).kind == "i":
        x = jnp.astype(x, dtype_of(win))
    *batch_shape, signal_length = shape_of(x)
    if nperseg == 1 and noverlap == 0:
        result = x[..., np.newaxis]
    else:
        starts = jnp.arange(signal_length - nperseg + 1, step=nperseg - noverlap)
        cut = partial(lax.dynamic_slice_in_dim, operand=x, slice_size=nperseg, axis=-1)
        result = vmap(cut, out_axes=-2)(start_index=starts)
    result = detrend_func(result)
    if jnp.iscomplexobj(win):
        (result,) = promote_dtypes_complex(result)
    result = jnp.reshape(win, (1,) * len(batch_shape) + (1, nperseg)) * result
    if sides == "twosided":
        return jnp.fft.fft(result, n=nfft)
    return jnp.fft.rfft(jnp.real(result), n=nfft)


def _detrend_func(detrend_type: Any, axis: int) -> Detrend:
    if isinstance(detrend_type, str):
        return partial(detrend, type=detrend_type, axis=-1)
    if callable(detrend_type):
        if axis == -1:
            return detrend_type  # type: ignore[no-any-return]  # the user's function
        # As JAX: `axis` is canonical by now, so a user's function is always wrapped.

        def moved(d: Array) -> Array:
            d = jnp.moveaxis(d, axis, -1)
            d = detrend_type(d)
            return jnp.moveaxis(d, -1, axis)

        return moved
    if not detrend_type:
        return lambda d: d
    raise ValueError(f"Unsupported detrend type: {detrend_type}")


def _delete(shape: tuple[int, ...], axis: int) -> tuple[int, ...]:
    return shape[:axis] + shape[axis + 1 :]


def _zeros_to(x: Array, length: int, like: Array) -> Array:
    """`x` zero-padded at the end of its last axis to `length` (zeros in `like`'s dtype)."""
    pad_shape = list(shape_of(x))
    pad_shape[-1] = length - shape_of(x)[-1]
    return jnp.concatenate((x, jnp.zeros_like(like, shape=pad_shape)), -1)


def _spectral_helper(
    x: Array,
    y: Any,
    fs: Any = 1.0,
    window: Any = "hann",
    nperseg: int | None = None,
    noverlap: int | None = None,
    nfft: int | None = None,
    detrend_type: Any = "constant",
    return_onesided: bool = True,
    scaling: str = "density",
    axis: int = -1,
    mode: str = "psd",
    boundary: str | None = None,
    padded: bool = False,
) -> tuple[Array, Array, Array]:
    """(frequencies, segment times, spectra) of `x` ("stft"), or of `x` against `y` ("psd":
    cross spectral density, or `x`'s own with `y` None)."""
    if mode not in ("psd", "stft"):
        raise ValueError(f"Unknown value for mode {mode}, must be one of: ('psd', 'stft')")
    if boundary not in _BOUNDARIES:
        raise ValueError(
            f"Unknown boundary option '{boundary}', must be one of: {list(_BOUNDARIES.keys())}"
        )
    axis = operator.index(concrete_or_error(axis, "axis of windowed-FFT"))
    axis = canonicalize_axis(axis, np.ndim(x))
    y_arr: Array
    if y is None:
        check_arraylike("spectral_helper", x)
        # Arrays, as JAX's promotion makes them (a NumPy `x` would be moved on the host).
        x = jnp.asarray(promote_dtypes_inexact(x)[0])
        y_arr = x
        outershape = _delete(shape_of(x), axis)
    else:
        if mode != "psd":
            raise ValueError("two-argument mode is available only when mode=='psd'")
        check_arraylike("spectral_helper", x, y)
        x, y_arr = (jnp.asarray(v) for v in promote_dtypes_inexact(x, y))
        if np.ndim(x) != np.ndim(y_arr):
            # JAX's message, braces and all (it is not an f-string there).
            raise ValueError("two-arguments must have the same rank ({x.ndim} vs {y.ndim}).")
        try:
            outershape = jnp.broadcast_shapes(
                _delete(shape_of(x), axis), _delete(shape_of(y_arr), axis)
            )
        except ValueError as err:
            raise ValueError("x and y cannot be broadcast together.") from err
    result_dtype = to_complex_dtype(dtype_of(x))
    freq_dtype = np.finfo(result_dtype).dtype

    nperseg_int = 0
    if nperseg is not None:
        nperseg_int = concrete_int(nperseg, "nperseg of windowed-FFT")
        if nperseg_int < 1:
            raise ValueError("nperseg must be a positive integer")
    win, nperseg_int = triage_segments(
        window,
        nperseg if nperseg is None else nperseg_int,
        input_length=shape_of(x)[axis],
        dtype=dtype_of(x),
    )
    if noverlap is None:
        noverlap_int = nperseg_int // 2
    else:
        noverlap_int = concrete_int(noverlap, "noverlap of windowed-FFT")
    nfft_int = nperseg_int if nfft is None else concrete_int(nfft, "nfft of windowed-FFT")

    sizes = [int(np.prod(shape_of(x)))] + ([] if y is None else [int(np.prod(shape_of(y_arr)))])
    if 0 in sizes:
        shape = shape_of(x)
        if y is not None:
            length = min(shape_of(x)[axis], shape_of(y_arr)[axis])
            # JAX inserts `axis` at position `length` (its `tuple_insert(outershape, length,
            # axis)` takes the index first); the shape is JAX's, not SciPy's.
            shape = (*outershape[:length], axis, *outershape[length:])
        zeros = jnp.zeros(shape, freq_dtype)
        return zeros, jnp.zeros(shape, freq_dtype), jnp.zeros(shape, result_dtype)

    x = jnp.moveaxis(x, axis, -1)
    if y is not None and np.ndim(y_arr) > 1:
        y_arr = jnp.moveaxis(y_arr, axis, -1)
    if y is not None and shape_of(x)[-1] != shape_of(y_arr)[-1]:
        if shape_of(x)[-1] < shape_of(y_arr)[-1]:
            x = _zeros_to(x, shape_of(y_arr)[-1], x)
        else:
            y_arr = _zeros_to(y_arr, shape_of(x)[-1], x)

    if nfft_int < nperseg_int:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if noverlap_int >= nperseg_int:
        raise ValueError("noverlap must be less than nperseg.")
    nstep = nperseg_int - noverlap_int

    if boundary is not None:
        extend = _BOUNDARIES[boundary]
        x = extend(x, nperseg_int // 2, axis=-1)
        if y is not None:
            y_arr = extend(y_arr, nperseg_int // 2, axis=-1)
    if padded:
        nadd = (-(shape_of(x)[-1] - nperseg_int) % nstep) % nperseg_int
        x = jnp.concatenate((x, jnp.zeros_like(x, shape=(*shape_of(x)[:-1], nadd))), axis=-1)
        if y is not None:
            tail = jnp.zeros_like(x, shape=(*shape_of(y_arr)[:-1], nadd))
            y_arr = jnp.concatenate((y_arr, tail), axis=-1)

    detrend_func = _detrend_func(detrend_type, axis)
    if scaling == "density":
        # `multiply`, not `*`: a window from SciPy or the caller is NumPy here and would be
        # squared on the host; JAX's window is a device array, so the product is staged.
        scale = 1.0 / (fs * jnp.sum(jnp.multiply(win, win)))
    elif scaling == "spectrum":
        scale = 1.0 / jnp.sum(win) ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")
    if mode == "stft":
        scale = jnp.sqrt(scale)
    (scale,) = promote_dtypes_complex(scale)

    sides = "twosided"
    if return_onesided:
        if jnp.iscomplexobj(x) or (y is not None and jnp.iscomplexobj(y)):
            warnings.warn("Input data is complex, switching to return_onesided=False", stacklevel=4)
        else:
            sides = "onesided"
    if sides == "twosided":
        freqs = jnp.fft.fftfreq(nfft_int, 1 / fs, dtype=freq_dtype)
    else:
        freqs = jnp.fft.rfftfreq(nfft_int, 1 / fs, dtype=freq_dtype)

    result = _segments_fft(x, win, detrend_func, nperseg_int, noverlap_int, nfft_int, sides)
    if y is not None:
        result_y = _segments_fft(
            y_arr, win, detrend_func, nperseg_int, noverlap_int, nfft_int, sides
        )
        result = jnp.conjugate(result) * result_y
    elif mode == "psd":
        result = jnp.conjugate(result) * result
    result = result * scale
    if sides == "onesided" and mode == "psd":
        # Every frequency but zero (and Nyquist, for even nfft) stands for its negative too.
        end = None if nfft_int % 2 else -1
        result = jnp.at(result)[..., 1:end].multiply(2)

    time = (
        jnp.arange(
            nperseg_int / 2,
            shape_of(x)[-1] - nperseg_int / 2 + 1,
            nperseg_int - noverlap_int,
            dtype=freq_dtype,
        )
        / fs
    )
    if boundary is not None:
        time = time - (nperseg_int / 2) / fs
    result = jnp.astype(result, result_dtype)
    if y is None and mode != "stft":
        result = jnp.real(result)
    return freqs, time, jnp.moveaxis(result, -1, axis)


def stft(
    x: Array,
    fs: Any = 1.0,
    window: str = "hann",
    nperseg: int = 256,
    noverlap: int | None = None,
    nfft: int | None = None,
    detrend: bool = False,
    return_onesided: bool = True,
    boundary: str | None = "zeros",
    padded: bool = True,
    axis: int = -1,
) -> tuple[Array, Array, Array]:
    """The short-time Fourier transform of `x`, as `scipy.signal.stft`.

    Args:
      x: the signal (time along `axis`).
      fs: the sampling frequency.
      window: a window name ("hann" without SciPy) or tuple, or a 1-D array.
      nperseg: the segment length (at most the signal's).
      noverlap: points shared by neighbouring segments (default half a segment).
      nfft: the FFT length, at least `nperseg` (default `nperseg`).
      detrend: a `detrend` type, a function of each segment, or False.
      return_onesided: only the non-negative frequencies, for real `x`.
      boundary: how the ends are extended by half a segment ("zeros", "even", "odd",
        "constant" or None).
      padded: zero-pad the end to a whole number of segments.
      axis: the time axis.

    Returns:
      (frequencies, segment times, the transform with frequencies along `axis` and segment
      times last).
    """
    return _spectral_helper(
        x,
        None,
        fs,
        window,
        nperseg,
        noverlap,
        nfft,
        detrend,
        return_onesided,
        scaling="spectrum",
        axis=axis,
        mode="stft",
        boundary=boundary,
        padded=padded,
    )


def csd(
    x: Array,
    y: Any,
    fs: Any = 1.0,
    window: str = "hann",
    nperseg: int | None = None,
    noverlap: int | None = None,
    nfft: int | None = None,
    detrend: str = "constant",
    return_onesided: bool = True,
    scaling: str = "density",
    axis: int = -1,
    average: str = "mean",
) -> tuple[Array, Array]:
    """The cross power spectral density of `x` and `y` by Welch's method, as
    `scipy.signal.csd` (`y` None: `x`'s own); `average` is "mean" or "median" of the segments'
    periodograms, `scaling` "density" or "spectrum", the rest as `stft`'s.

    Returns:
      (frequencies, the density; complex unless `y` is None).
    """
    freqs, _, pxy = _spectral_helper(
        x,
        y,
        fs,
        window,
        nperseg,
        noverlap,
        nfft,
        detrend,
        return_onesided,
        scaling,
        axis,
        mode="psd",
    )
    if y is not None:
        pxy = pxy + 0j
    shape = shape_of(pxy)
    if len(shape) >= 2 and int(np.prod(shape)) > 0:
        if shape[-1] > 1:
            if average == "median":
                bias = jnp.astype(median_bias(shape[-1]), dtype_of(pxy))
                if jnp.iscomplexobj(pxy):
                    pxy = jnp.median(jnp.real(pxy), axis=-1) + 1j * jnp.median(
                        jnp.imag(pxy), axis=-1
                    )
                else:
                    pxy = jnp.median(pxy, axis=-1)
                pxy = pxy / bias
            elif average == "mean":
                pxy = jnp.mean(pxy, axis=-1)
            else:
                raise ValueError(f'average must be "median" or "mean", got {average}')
        else:
            pxy = jnp.reshape(pxy, shape[:-1])
    return freqs, pxy


def welch(
    x: Array,
    fs: Any = 1.0,
    window: str = "hann",
    nperseg: int | None = None,
    noverlap: int | None = None,
    nfft: int | None = None,
    detrend: str = "constant",
    return_onesided: bool = True,
    scaling: str = "density",
    axis: int = -1,
    average: str = "mean",
) -> tuple[Array, Array]:
    """The power spectral density of `x` by Welch's method, as `scipy.signal.welch`; arguments
    as `csd`'s. Returns (frequencies, the real density)."""
    freqs, pxx = csd(
        x,
        None,
        fs=fs,
        window=window,
        nperseg=nperseg,
        noverlap=noverlap,
        nfft=nfft,
        detrend=detrend,
        return_onesided=return_onesided,
        scaling=scaling,
        axis=axis,
        average=average,
    )
    return freqs, jnp.real(pxx)
