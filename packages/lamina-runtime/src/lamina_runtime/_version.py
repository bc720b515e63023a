"""lamina-runtime's version, in a module of its own so that cache keys can name it."""

__version__ = "0.1.0"
