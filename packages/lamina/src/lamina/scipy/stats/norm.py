"""`lamina.scipy.stats.norm`: as `jax.scipy.stats.norm` (see `lamina_core`)."""

from lamina_core.scipy.stats.norm import (
    cdf,
    isf,
    logcdf,
    logpdf,
    logsf,
    pdf,
    ppf,
    sf,
)

__all__ = [
    "cdf",
    "isf",
    "logcdf",
    "logpdf",
    "logsf",
    "pdf",
    "ppf",
    "sf",
]
