"""`jax.extend.mlir.dialects.stablehlo`: jaxlib's MLIR bindings of the stablehlo dialect."""

from jaxlib.mlir.dialects.stablehlo import *  # noqa: F403
