"""lamina-core: Lamina's IR, trace machinery, transformations and array frontends.

This layer knows nothing of MLIR, XLA or JAX: it runs alone on NumPy.
"""

from lamina_core.config import config

__version__ = "0.1.0"

__all__ = ["__version__", "config"]
