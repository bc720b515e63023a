"""`lamina.dtypes`: dtypes and type promotion, as `jax.dtypes`."""

from lamina_core.dtypes import *  # noqa: F403  (this module is the public alias)
