"""lamina-hijax: user-defined high-level types and primitives, expanded to arrays to lower."""

__version__ = "0.1.0"

__all__ = ["__version__"]
