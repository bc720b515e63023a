"""`jax.extend.mlir.dialects.chlo`: jaxlib's MLIR bindings of the chlo dialect."""

from jaxlib.mlir.dialects.chlo import *  # noqa: F403
