"""`jax.version`: the version of this package (Lamina's own, not JAX's)."""

__version__ = "0.1.0"
__version_info__ = tuple(int(part) for part in __version__.split("."))

__all__ = ["__version__", "__version_info__"]
