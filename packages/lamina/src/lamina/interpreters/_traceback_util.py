"""What `jax.interpreters.traceback_util` is: registering folders whose frames tracebacks hide.

JAX's `jax.interpreters` imports its `traceback_util` and registers its own folder with it,
so the module shows among `jax.interpreters`' names; Lamina's does the same with this one,
over Lamina's list of internal folders (`lamina_core.ir.register_internal_path`).
"""

from __future__ import annotations

import os

from lamina_core.ir import register_internal_path


def register_exclusion(path: str) -> None:
    """Hide the frames of code in the folder `path` from the tracebacks Lamina's errors show,
    and from the source locations jaxprs record."""
    # register_internal_path takes a file of the folder (a package's __file__).
    register_internal_path(os.path.join(path, "__init__.py"))
