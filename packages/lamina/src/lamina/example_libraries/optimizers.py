"""`lamina.example_libraries.optimizers`, as `jax.example_libraries.optimizers`."""

from lamina_core.example_libraries.optimizers import *  # noqa: F403  (the public alias)
