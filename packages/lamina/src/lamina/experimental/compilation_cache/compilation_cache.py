"""`jax.experimental.compilation_cache.compilation_cache`: `set_cache_dir` and `reset_cache`.

Both act through the configuration, as JAX's do: the runtime reads `jax_compilation_cache_dir`
(and the cache's other options) each time it consults the persistent cache, and opens the
directory they name (`lamina_runtime.configured_cache_dir`). So there is no process-wide cache
object to build or reset here, only options to set.
"""

from __future__ import annotations

import os

from lamina_core import config


def set_cache_dir(path: str | os.PathLike[str]) -> None:
    """Keep compiled executables in `path`, and look for them there before compiling.

    The same as `lamina.config.update("jax_compilation_cache_dir", path)`. The cache is
    trusted: whoever can write to `path` can make this process run code of their choosing.
    """
    config.update("jax_compilation_cache_dir", os.fspath(path))


def reset_cache() -> None:
    """Return the cache to its uninitialized state, as JAX's does.

    Lamina's runtime holds no initialized cache between compilations: it opens the directory
    the options name each time they change, so the next compilation already sees the current
    settings and this has nothing to discard. The options themselves are kept, as JAX keeps
    them.
    """


__all__ = ["reset_cache", "set_cache_dir"]
