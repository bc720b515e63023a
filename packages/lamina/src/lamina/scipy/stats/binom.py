"""`lamina.scipy.stats.binom`: as `jax.scipy.stats.binom` (see `lamina_core`)."""

from lamina_core.scipy.stats.binom import (
    logpmf,
    pmf,
)

__all__ = [
    "logpmf",
    "pmf",
]
