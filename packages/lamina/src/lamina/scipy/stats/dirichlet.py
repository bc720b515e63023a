"""`lamina.scipy.stats.dirichlet`: as `jax.scipy.stats.dirichlet` (see `lamina_core`)."""

from lamina_core.scipy.stats.dirichlet import (
    logpdf,
    pdf,
)

__all__ = [
    "logpdf",
    "pdf",
]
