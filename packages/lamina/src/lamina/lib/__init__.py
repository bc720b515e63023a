"""`lamina.lib`, as `jax.lib`: only the version of the jaxlib Lamina runs on (JAX empties this
module; its `xla_bridge` and `xla_client` are gone)."""

import importlib.metadata as _metadata

__version__ = _metadata.version("jaxlib")
