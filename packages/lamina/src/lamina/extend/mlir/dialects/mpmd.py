"""`jax.extend.mlir.dialects.mpmd`: jaxlib's MLIR bindings of the mpmd dialect."""

from jaxlib.mlir.dialects.mpmd import *  # noqa: F403
