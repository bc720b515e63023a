"""`lamina.scipy.stats.bernoulli`: as `jax.scipy.stats.bernoulli` (see `lamina_core`)."""

from lamina_core.scipy.stats.bernoulli import (
    cdf,
    logpmf,
    pmf,
    ppf,
)

__all__ = [
    "cdf",
    "logpmf",
    "pmf",
    "ppf",
]
