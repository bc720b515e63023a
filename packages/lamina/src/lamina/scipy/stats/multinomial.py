"""`lamina.scipy.stats.multinomial`: as `jax.scipy.stats.multinomial` (see `lamina_core`)."""

from lamina_core.scipy.stats.multinomial import (
    logpmf,
    pmf,
)

__all__ = [
    "logpmf",
    "pmf",
]
