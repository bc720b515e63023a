"""`jax.extend.mlir.ir`: jaxlib's MLIR core bindings (contexts, types, attributes, ops)."""

from jaxlib.mlir.ir import *  # noqa: F403
