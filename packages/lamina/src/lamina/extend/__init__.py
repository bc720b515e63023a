"""`jax.extend`: the APIs for libraries that extend JAX, over Lamina's machinery.

Each submodule is imported on first use, as few programs need them.
"""

from __future__ import annotations

import importlib
from types import ModuleType

_SUBMODULES = frozenset(
    {
        "backend",
        "core",
        "ifrt_programs",
        "linear_util",
        "lowering",
        "mlir",
        "pallas",
        "random",
        "sharding",
        "source_info_util",
        "xla",
    }
)


def __getattr__(name: str) -> ModuleType:
    if name in _SUBMODULES:
        return importlib.import_module(f"lamina.extend.{name}")
    raise AttributeError(f"module 'lamina.extend' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_SUBMODULES})
