"""`lamina.scipy.stats.truncnorm`: as `jax.scipy.stats.truncnorm` (see `lamina_core`)."""

from lamina_core.scipy.stats.truncnorm import (
    cdf,
    logcdf,
    logpdf,
    logsf,
    pdf,
    sf,
)

__all__ = [
    "cdf",
    "logcdf",
    "logpdf",
    "logsf",
    "pdf",
    "sf",
]
