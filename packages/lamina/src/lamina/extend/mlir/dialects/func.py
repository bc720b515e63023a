"""`jax.extend.mlir.dialects.func`: jaxlib's MLIR bindings of the func dialect."""

from jaxlib.mlir.dialects.func import *  # noqa: F403
