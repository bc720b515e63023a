"""Lamina: JAX's tracing compiler core as a stack of small typed libraries.

`import lamina as jax` runs JAX code for everything Lamina implements. This package only
re-exports the layers' public names; it holds no logic of its own.
"""

from lamina_core import config

__version__ = "0.1.0"

__all__ = ["__version__", "config"]
