"""lamina-runtime: the pipeline from traced function to XLA executable, and running it."""

__version__ = "0.1.0"

__all__ = ["__version__"]
