"""`lamina.image`: image resampling, as `jax.image` (see `lamina_core.image`)."""

from lamina_core.image import ResizeMethod, resize, scale_and_translate

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
