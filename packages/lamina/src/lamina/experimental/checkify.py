"""`jax.experimental.checkify`: functional error checks (JAX 0.10.2's names).

Loaded on first import, never by `import lamina`. Importing it also tells the lowering what a
`check` that `checkify` did not functionalize means in a compiled program: nothing for a
`debug_check`, JAX's `functionalization_error` otherwise.
"""

from collections.abc import Sequence
from typing import Any

from lamina_core.checkify import (
    Error,
    ErrorCategory,
    JaxRuntimeError,
    all_checks,
    automatic_checks,
    check,
    check_error,
    check_p,
    checkify,
    debug_check,
    div_checks,
    float_checks,
    functionalization_error,
    index_checks,
    init_error,
    nan_checks,
    user_checks,
)
from lamina_mlir import LoweringRuleContext, lowering_rules


def _check_lowering(
    ctx: LoweringRuleContext, *args: Any, err_tree: Any, debug: bool
) -> Sequence[Any]:
    if debug:  # dropped unless checkified
        return []
    raise functionalization_error


if check_p not in lowering_rules:
    lowering_rules.set(check_p, _check_lowering)

__all__ = [
    "Error",
    "ErrorCategory",
    "JaxRuntimeError",
    "all_checks",
    "automatic_checks",
    "check",
    "check_error",
    "checkify",
    "debug_check",
    "div_checks",
    "float_checks",
    "index_checks",
    "init_error",
    "nan_checks",
    "user_checks",
]
