"""`jax.ad_checkpoint`: `checkpoint_name`, the policies and the policies' answers.

(JAX 0.10 removed `jax.ad_checkpoint.checkpoint` and `remat`; use `lamina.checkpoint`.)
"""

import importlib
from typing import Any

from lamina_core.checkpoint import checkpoint_name, checkpoint_policies
from lamina_core.interpreters import Offloadable, Recompute, Saveable

_LAZY = {"print_saved_residuals": "lamina._saved_residuals"}
"""Names whose modules are imported on first use (`import lamina` imports this module)."""

__all__ = [
    "Offloadable",
    "Recompute",
    "Saveable",
    "checkpoint_name",
    "checkpoint_policies",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'lamina.ad_checkpoint' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
