"""`lamina.scipy.stats.uniform`: as `jax.scipy.stats.uniform` (see `lamina_core`)."""

from lamina_core.scipy.stats.uniform import (
    cdf,
    logpdf,
    pdf,
    ppf,
)

__all__ = [
    "cdf",
    "logpdf",
    "pdf",
    "ppf",
]
