"""`lamina.scipy.stats.expon`: as `jax.scipy.stats.expon` (see `lamina_core`)."""

from lamina_core.scipy.stats.expon import (
    cdf,
    logcdf,
    logpdf,
    logsf,
    pdf,
    ppf,
    sf,
)

__all__ = [
    "cdf",
    "logcdf",
    "logpdf",
    "logsf",
    "pdf",
    "ppf",
    "sf",
]
