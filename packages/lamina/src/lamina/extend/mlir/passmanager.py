"""`jax.extend.mlir.passmanager`: jaxlib's MLIR pass manager bindings."""

from jaxlib.mlir.passmanager import *  # noqa: F403
