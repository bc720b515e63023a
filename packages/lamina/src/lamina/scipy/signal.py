"""`lamina.scipy.signal`: convolutions and windowed-FFT spectra, as `jax.scipy.signal` (see
`lamina_core.scipy.signal`)."""

from lamina_core.scipy.signal import (
    convolve,
    convolve2d,
    correlate,
    correlate2d,
    csd,
    detrend,
    fftconvolve,
    istft,
    stft,
    welch,
)

__all__ = [
    "convolve",
    "convolve2d",
    "correlate",
    "correlate2d",
    "csd",
    "detrend",
    "fftconvolve",
    "istft",
    "stft",
    "welch",
]
