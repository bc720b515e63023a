"""`jax.scipy.ndimage` for Lamina: `map_coordinates` (see `lamina_core.scipy._ndimage`)."""

from lamina_core.scipy._ndimage import map_coordinates

__all__ = ["map_coordinates"]
