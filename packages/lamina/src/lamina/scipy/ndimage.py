"""`lamina.scipy.ndimage`: `map_coordinates`, as `jax.scipy.ndimage` (see
`lamina_core.scipy.ndimage`)."""

from lamina_core.scipy.ndimage import map_coordinates

__all__ = ["map_coordinates"]
