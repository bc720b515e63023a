"""`lamina.scipy.stats.laplace`: as `jax.scipy.stats.laplace` (see `lamina_core`)."""

from lamina_core.scipy.stats.laplace import (
    cdf,
    logpdf,
    pdf,
)

__all__ = [
    "cdf",
    "logpdf",
    "pdf",
]
