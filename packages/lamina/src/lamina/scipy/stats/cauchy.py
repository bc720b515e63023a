"""`lamina.scipy.stats.cauchy`: as `jax.scipy.stats.cauchy` (see `lamina_core`)."""

from lamina_core.scipy.stats.cauchy import (
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
