"""`lamina.scipy.stats.wrapcauchy`: as `jax.scipy.stats.wrapcauchy` (see `lamina_core`)."""

from lamina_core.scipy.stats.wrapcauchy import (
    logpdf,
    pdf,
)

__all__ = [
    "logpdf",
    "pdf",
]
