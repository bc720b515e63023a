"""`jax.extend.mlir.dialects.builtin`: jaxlib's MLIR bindings of the builtin dialect."""

from jaxlib.mlir.dialects.builtin import *  # noqa: F403
