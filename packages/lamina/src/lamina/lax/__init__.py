"""`lamina.lax`: JAX's `lax` API.

The public alias of `lamina_core.lax`, re-exported family by family so that type
checkers see every name.
"""

from lamina.lax import linalg as linalg
from lamina_core.lax._approx_top_k import *  # noqa: F403
from lamina_core.lax._associative_scan import *  # noqa: F403
from lamina_core.lax._barrier import *  # noqa: F403
from lamina_core.lax._bessel import *  # noqa: F403
from lamina_core.lax._collectives import *  # noqa: F403
from lamina_core.lax._collectives_layout import *  # noqa: F403
from lamina_core.lax._composite import *  # noqa: F403
from lamina_core.lax._conv import *  # noqa: F403
from lamina_core.lax._conv_patches import *  # noqa: F403
from lamina_core.lax._conv_shapes import *  # noqa: F403
from lamina_core.lax._cumulative import *  # noqa: F403
from lamina_core.lax._device_put import *  # noqa: F403
from lamina_core.lax._dot_types import *  # noqa: F403
from lamina_core.lax._elementwise import *  # noqa: F403
from lamina_core.lax._fft import *  # noqa: F403
from lamina_core.lax._gather_scatter import *  # noqa: F403
from lamina_core.lax._igamma import *  # noqa: F403
from lamina_core.lax._joining import *  # noqa: F403
from lamina_core.lax._linalg import *  # noqa: F403
from lamina_core.lax._linear_solve import *  # noqa: F403
from lamina_core.lax._misc_prims import *  # noqa: F403
from lamina_core.lax._platform import *  # noqa: F403
from lamina_core.lax._ragged_dot import *  # noqa: F403
from lamina_core.lax._reduce_generic import *  # noqa: F403
from lamina_core.lax._reductions import *  # noqa: F403
from lamina_core.lax._rng import *  # noqa: F403
from lamina_core.lax._scaled_dot import *  # noqa: F403
from lamina_core.lax._select_and_scatter import *  # noqa: F403
from lamina_core.lax._selection import *  # noqa: F403
from lamina_core.lax._shape import *  # noqa: F403
from lamina_core.lax._sharding_constraint import *  # noqa: F403
from lamina_core.lax._slicing import *  # noqa: F403
from lamina_core.lax._sorting import *  # noqa: F403
from lamina_core.lax._stop_gradient import *  # noqa: F403
from lamina_core.lax._structural import *  # noqa: F403
from lamina_core.lax._tokens import *  # noqa: F403
from lamina_core.lax._transcendental import *  # noqa: F403
from lamina_core.lax._windowed import *  # noqa: F403
from lamina_core.lax._zeta import *  # noqa: F403
from lamina_core.lax.control_flow import cond as cond
from lamina_core.lax.control_flow import cond_p as cond_p
from lamina_core.lax.control_flow import fori_loop as fori_loop
from lamina_core.lax.control_flow import map as map
from lamina_core.lax.control_flow import scan as scan
from lamina_core.lax.control_flow import scan_p as scan_p
from lamina_core.lax.control_flow import switch as switch
from lamina_core.lax.control_flow import while_loop as while_loop
from lamina_core.lax.control_flow import while_p as while_p
