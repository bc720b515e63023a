"""`jax.extend.mlir.dialects.sparse_tensor`: jaxlib's MLIR bindings of the sparse_tensor dialect."""

from jaxlib.mlir.dialects.sparse_tensor import *  # noqa: F403
