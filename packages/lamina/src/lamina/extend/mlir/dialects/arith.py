"""`jax.extend.mlir.dialects.arith`: jaxlib's MLIR bindings of the arith dialect."""

from jaxlib.mlir.dialects.arith import *  # noqa: F403
