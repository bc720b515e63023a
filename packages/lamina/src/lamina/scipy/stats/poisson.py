"""`lamina.scipy.stats.poisson`: as `jax.scipy.stats.poisson` (see `lamina_core`)."""

from lamina_core.scipy.stats.poisson import (
    entropy,
    logpmf,
    pmf,
)

__all__ = [
    "entropy",
    "logpmf",
    "pmf",
]
