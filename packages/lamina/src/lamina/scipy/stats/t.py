"""`lamina.scipy.stats.t`: as `jax.scipy.stats.t` (see `lamina_core`)."""

from lamina_core.scipy.stats.t import (
    logpdf,
    pdf,
)

__all__ = [
    "logpdf",
    "pdf",
]
