"""`lamina.scipy`: as `jax.scipy` (see `lamina_core.scipy`): `special`, `stats`, `linalg`."""

from lamina.scipy import linalg, special, stats

__all__ = ["linalg", "special", "stats"]
