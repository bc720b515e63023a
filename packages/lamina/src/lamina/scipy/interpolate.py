"""`lamina.scipy.interpolate`: `RegularGridInterpolator`, as `jax.scipy.interpolate` (see
`lamina_core.scipy.interpolate`)."""

from lamina_core.scipy.interpolate import RegularGridInterpolator

__all__ = ["RegularGridInterpolator"]
