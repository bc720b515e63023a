"""`jax.extend.mlir.dialects.memref`: jaxlib's MLIR bindings of the memref dialect."""

from jaxlib.mlir.dialects.memref import *  # noqa: F403
