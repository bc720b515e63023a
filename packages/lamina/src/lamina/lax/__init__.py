"""`lamina.lax`: JAX's `lax` API."""

from lamina_core.lax import *  # noqa: F403  (this module is the public alias)
from lamina_core.lax import __all__ as __all__
