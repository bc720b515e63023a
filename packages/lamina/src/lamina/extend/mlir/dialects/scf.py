"""`jax.extend.mlir.dialects.scf`: jaxlib's MLIR bindings of the scf dialect."""

from jaxlib.mlir.dialects.scf import *  # noqa: F403
