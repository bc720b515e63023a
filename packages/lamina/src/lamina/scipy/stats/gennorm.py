"""`lamina.scipy.stats.gennorm`: as `jax.scipy.stats.gennorm` (see `lamina_core`)."""

from lamina_core.scipy.stats.gennorm import (
    cdf,
    logpdf,
    pdf,
)

__all__ = [
    "cdf",
    "logpdf",
    "pdf",
]
