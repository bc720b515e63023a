"""`lamina.lax`: JAX's `lax` API.

The public alias of `lamina_core.lax`: every name of its `__all__` (which type
checkers read too).
"""

from lamina.lax import linalg as linalg
from lamina_core.lax import *  # noqa: F403
