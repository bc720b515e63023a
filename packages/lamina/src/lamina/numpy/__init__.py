"""`lamina.numpy`: the NumPy-compatible API (`import lamina.numpy as jnp`)."""

from lamina_core.numpy import *  # noqa: F403  (this module is the public alias)
from lamina_core.numpy import __all__ as __all__
