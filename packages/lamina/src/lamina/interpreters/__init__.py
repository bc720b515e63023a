"""`jax.interpreters`: the rule tables of Lamina's interpreters, as JAX publishes them.

`ad` (jvp and transpose rules), `batching` (vmap rules), `mlir` (lowering rules),
`partial_eval` (tracing to jaxprs, partial evaluation, DCE) and `xla` (running a primitive
on its own); each is imported on first use.
"""

from __future__ import annotations

import importlib
from types import ModuleType

_SUBMODULES = frozenset({"ad", "batching", "mlir", "partial_eval", "xla"})


def __getattr__(name: str) -> ModuleType:
    if name in _SUBMODULES:
        return importlib.import_module(f"lamina.interpreters.{name}")
    raise AttributeError(f"module 'lamina.interpreters' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_SUBMODULES})
