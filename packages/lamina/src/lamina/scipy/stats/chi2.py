"""`lamina.scipy.stats.chi2`: as `jax.scipy.stats.chi2` (see `lamina_core`)."""

from lamina_core.scipy.stats.chi2 import (
    logpdf,
    pdf,
)

__all__ = [
    "logpdf",
    "pdf",
]
