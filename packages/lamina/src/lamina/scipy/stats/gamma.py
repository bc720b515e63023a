"""`lamina.scipy.stats.gamma`: as `jax.scipy.stats.gamma` (see `lamina_core`)."""

from lamina_core.scipy.stats.gamma import (
    logpdf,
    pdf,
)

__all__ = [
    "logpdf",
    "pdf",
]
