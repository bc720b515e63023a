"""`lamina.scipy.stats.logistic`: as `jax.scipy.stats.logistic` (see `lamina_core`)."""

from lamina_core.scipy.stats.logistic import (
    cdf,
    isf,
    logpdf,
    pdf,
    ppf,
    sf,
)

__all__ = [
    "cdf",
    "isf",
    "logpdf",
    "pdf",
    "ppf",
    "sf",
]
