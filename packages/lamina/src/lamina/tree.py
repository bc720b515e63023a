"""`lamina.tree`: pytrees, as `jax.tree`."""

from lamina_core.tree import public as _public
from lamina_core.tree.tree import *  # noqa: F403  (this module is the public alias)

# The functions handing treedefs to users give ones that print as JAX's (`PyTreeDef(...)`).
flatten = _public.flatten
flatten_with_path = _public.flatten_with_path
structure = _public.structure
