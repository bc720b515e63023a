"""`lamina.scipy.optimize`: `minimize` and `OptimizeResults`, as `jax.scipy.optimize` (see
`lamina_core.scipy.optimize`)."""

from lamina_core.scipy.optimize import OptimizeResults, minimize

__all__ = ["OptimizeResults", "minimize"]
