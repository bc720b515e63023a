"""`jax.scipy.interpolate` for Lamina: `RegularGridInterpolator` (see
`lamina_core.scipy._interpolate`)."""

from lamina_core.scipy._interpolate import RegularGridInterpolator

__all__ = ["RegularGridInterpolator"]
