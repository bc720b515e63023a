"""`lamina.numpy`: the NumPy-compatible API (`import lamina.numpy as jnp`).

The public alias of `lamina_core.numpy`: every name of its `__all__` (which type
checkers read too).
"""

from lamina.numpy import fft as fft
from lamina.numpy import linalg as linalg
from lamina_core.numpy import *  # noqa: F403
from lamina_core.numpy import Array, ArrayLike, DTypeLike, e, inf, nan, pi  # noqa: F401
from lamina_runtime import Array as ndarray  # noqa: F401  (jax.numpy.ndarray is jax.Array)
