"""`lamina.scipy.stats.gumbel_r`: as `jax.scipy.stats.gumbel_r` (see `lamina_core`)."""

from lamina_core.scipy.stats.gumbel_r import (
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
