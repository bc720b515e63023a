"""`lamina.numpy`: the NumPy-compatible API (`import lamina.numpy as jnp`).

The public alias of `lamina_core.numpy`: every name of its `__all__` (which type
checkers read too), except the array creators taking `device=` (`_placed`).
"""

from lamina import _auto_axes_hook as _auto_axes_hook  # percentile's out_sharding
from lamina.numpy import fft as fft
from lamina.numpy import linalg as linalg
from lamina_core.numpy import *  # noqa: F403
from lamina_core.numpy import Array, ArrayLike, DTypeLike, e, inf, nan, pi  # noqa: F401
from lamina_runtime import Array as ndarray  # noqa: F401  (jax.numpy.ndarray is jax.Array)

# `device=` needs the runtime: these take the place of lamina-core's (so come after them).
# isort: off
from lamina.numpy._placed import (
    arange as arange,
    array as array,
    asarray as asarray,
    astype as astype,
    empty as empty,
    empty_like as empty_like,
    eye as eye,
    full as full,
    full_like as full_like,
    linspace as linspace,
    ones as ones,
    ones_like as ones_like,
    zeros as zeros,
    zeros_like as zeros_like,
)
# isort: on
