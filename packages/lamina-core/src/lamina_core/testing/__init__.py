"""Helpers for tests, never imported by Lamina's own code: comparing Lamina with JAX
(`_core`), checking differentiation rules (`_autodiff`) and batching rules (`_vmap`), and
loading test modules by path (`_modules`, for tests and tools alike).
"""

from lamina_core.testing._autodiff import (
    check_ad,
    check_grads,
    check_jvp,
    check_vjp,
    tangent_like,
    transforms,
)
from lamina_core.testing._core import (
    ORACLE_COMPILER_OPTIONS,
    Evaluator,
    Oracle,
    jitted,
    reference_evaluator,
    sweep,
)
from lamina_core.testing._modules import load_module, load_test_module, skip_without_devices
from lamina_core.testing._vmap import check_vmap

__all__ = [
    "ORACLE_COMPILER_OPTIONS",
    "Evaluator",
    "Oracle",
    "check_ad",
    "check_grads",
    "check_jvp",
    "check_vjp",
    "check_vmap",
    "jitted",
    "load_module",
    "load_test_module",
    "reference_evaluator",
    "skip_without_devices",
    "sweep",
    "tangent_like",
    "transforms",
]
