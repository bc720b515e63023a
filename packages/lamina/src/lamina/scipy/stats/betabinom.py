"""`lamina.scipy.stats.betabinom`: as `jax.scipy.stats.betabinom` (see `lamina_core`)."""

from lamina_core.scipy.stats.betabinom import (
    logpmf,
    pmf,
)

__all__ = [
    "logpmf",
    "pmf",
]
