"""`jax.scipy.optimize` for Lamina: `minimize` and `OptimizeResults` (see
`lamina_core.scipy._optimize`)."""

from lamina_core.scipy._optimize import OptimizeResults, minimize

__all__ = ["OptimizeResults", "minimize"]
