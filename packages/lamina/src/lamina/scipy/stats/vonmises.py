"""`lamina.scipy.stats.vonmises`: as `jax.scipy.stats.vonmises` (see `lamina_core`)."""

from lamina_core.scipy.stats.vonmises import (
    logpdf,
    pdf,
)

__all__ = [
    "logpdf",
    "pdf",
]
