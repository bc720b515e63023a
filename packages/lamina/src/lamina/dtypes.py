"""`lamina.dtypes`: dtypes and type promotion, as `jax.dtypes`."""

from lamina_core.ir import itemsize_bits as itemsize_bits
from lamina_core.ir import scalar_type_of as scalar_type_of
from lamina_core.ir.dtypes import *  # noqa: F403  (this module is the public alias)
