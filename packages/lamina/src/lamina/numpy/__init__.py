"""`lamina.numpy`: the NumPy-compatible API (`import lamina.numpy as jnp`).

The public alias of `lamina_core.numpy`: every name of its `__all__` (which type
checkers read too), except the array creators taking `device=` (`_placed`).
"""

from typing import TYPE_CHECKING

from lamina import _auto_axes_hook as _auto_axes_hook  # percentile's out_sharding
from lamina.numpy import fft as fft
from lamina.numpy import linalg as linalg

if TYPE_CHECKING:
    # A type checker keeps the first binding of a name: the placed creators' (`device=`)
    # come before lamina-core's from the star import below.
    from lamina.numpy._placed import *  # noqa: F403
from lamina_core.numpy import *  # type: ignore[assignment]  # noqa: F403
from lamina_core.numpy import Array, ArrayLike, DTypeLike, e, inf, nan, pi  # noqa: F401
from lamina_runtime import Array as ndarray  # noqa: F401  (jax.numpy.ndarray is jax.Array)

# At run time the last binding counts: the placed creators take the place of lamina-core's.
from lamina.numpy._placed import *  # noqa: F403  # isort: skip
