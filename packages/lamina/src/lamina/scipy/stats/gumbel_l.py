"""`lamina.scipy.stats.gumbel_l`: as `jax.scipy.stats.gumbel_l` (see `lamina_core`)."""

from lamina_core.scipy.stats.gumbel_l import (
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
