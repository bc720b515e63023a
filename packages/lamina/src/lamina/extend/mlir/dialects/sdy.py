"""`jax.extend.mlir.dialects.sdy`: jaxlib's MLIR bindings of the sdy dialect."""

from jaxlib.mlir.dialects.sdy import *  # noqa: F403
