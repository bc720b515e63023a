"""lamina-mlir: lowering of Lamina jaxprs to StableHLO with jaxlib's MLIR bindings."""

__version__ = "0.1.0"

__all__ = ["__version__"]
