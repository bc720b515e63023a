"""`lamina.scipy`: as `jax.scipy` (see `lamina_core.scipy`): `special`, `stats`, `linalg`, `fft`,
`signal`."""

from lamina.scipy import fft, linalg, signal, special, stats

__all__ = ["fft", "linalg", "signal", "special", "stats"]
