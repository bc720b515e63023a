"""`jax.extend.mlir.dialects.vector`: jaxlib's MLIR bindings of the vector dialect."""

from jaxlib.mlir.dialects.vector import *  # noqa: F403
