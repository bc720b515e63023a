"""lamina-refs: Refs (mutable arrays) and their discharge to functional form."""

__version__ = "0.1.0"

__all__ = ["__version__"]
