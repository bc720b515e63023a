"""`lamina.lax`: JAX's `lax` API.

The public alias of `lamina_core.lax`: every name of its `__all__` (which type
checkers read too).
"""

from lamina.lax import linalg as linalg
from lamina_core.lax import *  # noqa: F403
from lamina_core.lax.control_flow import cond as cond
from lamina_core.lax.control_flow import cond_p as cond_p
from lamina_core.lax.control_flow import fori_loop as fori_loop
from lamina_core.lax.control_flow import map as map
from lamina_core.lax.control_flow import scan as scan
from lamina_core.lax.control_flow import scan_p as scan_p
from lamina_core.lax.control_flow import switch as switch
from lamina_core.lax.control_flow import while_loop as while_loop
from lamina_core.lax.control_flow import while_p as while_p
