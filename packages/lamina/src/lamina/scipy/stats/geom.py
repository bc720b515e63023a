"""`lamina.scipy.stats.geom`: as `jax.scipy.stats.geom` (see `lamina_core`)."""

from lamina_core.scipy.stats.geom import (
    logpmf,
    pmf,
)

__all__ = [
    "logpmf",
    "pmf",
]
