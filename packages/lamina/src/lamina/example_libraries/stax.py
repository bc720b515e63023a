"""`lamina.example_libraries.stax`, as `jax.example_libraries.stax`."""

from lamina_core.example_libraries.stax import *  # noqa: F403  (the public alias)
