"""`lamina.scipy.stats.beta`: as `jax.scipy.stats.beta` (see `lamina_core`)."""

from lamina_core.scipy.stats.beta import (
    logpdf,
    pdf,
)

__all__ = [
    "logpdf",
    "pdf",
]
