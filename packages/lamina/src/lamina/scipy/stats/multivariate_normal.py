"""`lamina.scipy.stats.multivariate_normal`: as `jax.scipy.stats.multivariate_normal` (see
`lamina_core`)."""

from lamina_core.scipy.stats.multivariate_normal import logpdf, pdf

__all__ = ["logpdf", "pdf"]
