"""`jax.extend.mlir.dialects.math`: jaxlib's MLIR bindings of the math dialect."""

from jaxlib.mlir.dialects.math import *  # noqa: F403
