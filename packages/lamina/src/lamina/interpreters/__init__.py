"""`jax.interpreters`: the rule tables of Lamina's interpreters, as JAX publishes them.

`ad` (jvp and transpose rules), `batching` (vmap rules), `mlir` (lowering rules),
`partial_eval` (tracing to jaxprs, partial evaluation, DCE), `pxla` (compile options over
devices) and `xla` (running a primitive on its own); each is imported on first use. `os` and
`traceback_util` are names JAX's package has because it imports them; they are here likewise.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

from lamina.interpreters import _traceback_util as traceback_util

# As JAX's package: its own frames are hidden from users' tracebacks.
traceback_util.register_exclusion(os.path.dirname(__file__))

_SUBMODULES = frozenset({"ad", "batching", "mlir", "partial_eval", "pxla", "xla"})


def __getattr__(name: str) -> ModuleType:
    if name in _SUBMODULES:
        return importlib.import_module(f"lamina.interpreters.{name}")
    raise AttributeError(f"module 'lamina.interpreters' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_SUBMODULES})
