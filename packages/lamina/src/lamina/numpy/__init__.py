"""`lamina.numpy`: the NumPy-compatible API (`import lamina.numpy as jnp`).

The public alias of `lamina_core.numpy`, re-exported family by family so that type
checkers see every name.
"""

from lamina.numpy import fft as fft
from lamina.numpy import linalg as linalg
from lamina_core.numpy import Array, ArrayLike, DTypeLike, e, inf, nan, pi  # noqa: F401
from lamina_core.numpy._array_compare import *  # noqa: F403
from lamina_core.numpy._bits_sorts import *  # noqa: F403
from lamina_core.numpy._creation import *  # noqa: F403
from lamina_core.numpy._cumulative import *  # noqa: F403
from lamina_core.numpy._functional import *  # noqa: F403
from lamina_core.numpy._grids import *  # noqa: F403
from lamina_core.numpy._histograms import *  # noqa: F403
from lamina_core.numpy._host_io import *  # noqa: F403
from lamina_core.numpy._index_helpers import *  # noqa: F403
from lamina_core.numpy._index_tricks import *  # noqa: F403
from lamina_core.numpy._indexing import *  # noqa: F403
from lamina_core.numpy._linalg import *  # noqa: F403
from lamina_core.numpy._loops import *  # noqa: F403
from lamina_core.numpy._matrix_parts import *  # noqa: F403
from lamina_core.numpy._nan_reductions import *  # noqa: F403
from lamina_core.numpy._pad import *  # noqa: F403
from lamina_core.numpy._polynomial_fit import *  # noqa: F403
from lamina_core.numpy._quantiles import *  # noqa: F403
from lamina_core.numpy._reductions import *  # noqa: F403
from lamina_core.numpy._scalar_types import *  # noqa: F403
from lamina_core.numpy._searchsorted import *  # noqa: F403
from lamina_core.numpy._setops import *  # noqa: F403
from lamina_core.numpy._shape import *  # noqa: F403
from lamina_core.numpy._shape_more import *  # noqa: F403
from lamina_core.numpy._signal import *  # noqa: F403
from lamina_core.numpy._sorting import *  # noqa: F403
from lamina_core.numpy._statistics import *  # noqa: F403
from lamina_core.numpy._ufuncs import *  # noqa: F403
from lamina_core.numpy._ufuncs_composite import *  # noqa: F403
from lamina_runtime import Array as ndarray  # noqa: F401  (jax.numpy.ndarray is jax.Array)
