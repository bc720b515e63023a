"""`jax.scipy.signal` for Lamina: convolution and correlation (`convolve`, `correlate`,
`convolve2d`, `correlate2d`, `fftconvolve`), `detrend`, and the windowed-FFT spectra (`stft`,
`istft`, `csd`, `welch`), each computed and staged as JAX 0.10.2 does.

The convolutions live in `_signal_convolve`, the spectra and `detrend` in `_signal_spectral`,
`istft` in `_signal_istft`.
"""

from lamina_core.scipy._signal_convolve import (
    convolve,
    convolve2d,
    correlate,
    correlate2d,
    fftconvolve,
)
from lamina_core.scipy._signal_istft import istft
from lamina_core.scipy._signal_spectral import csd, detrend, stft, welch

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
