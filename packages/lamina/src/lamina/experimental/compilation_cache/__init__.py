"""`jax.experimental.compilation_cache`: the persistent compilation cache's settings.

Loaded on first import, never by `import lamina`.
"""

from lamina.experimental.compilation_cache import compilation_cache

__all__ = ["compilation_cache"]
