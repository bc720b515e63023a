"""`lamina.scipy.stats.pareto`: as `jax.scipy.stats.pareto` (see `lamina_core`)."""

from lamina_core.scipy.stats.pareto import (
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
