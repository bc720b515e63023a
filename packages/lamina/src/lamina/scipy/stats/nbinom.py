"""`lamina.scipy.stats.nbinom`: as `jax.scipy.stats.nbinom` (see `lamina_core`)."""

from lamina_core.scipy.stats.nbinom import (
    logpmf,
    pmf,
)

__all__ = [
    "logpmf",
    "pmf",
]
