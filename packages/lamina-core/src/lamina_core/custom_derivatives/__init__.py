"""User-defined derivative rules: `custom_jvp` and `custom_vjp`, as JAX's.

A decorated function binds one call primitive (`custom_jvp_call`, `custom_vjp_call`) whose
`call_jaxpr` is the function traced for the arguments' types; values it closes over become
leading operands (`num_consts`). Staging records one equation, evaluation and lowering run
the jaxpr, and only differentiation looks at the user's rules (`_jvp`, `_vjp`).
"""

from lamina_core.custom_derivatives._common import (
    CustomVJPException,
    CustomVJPPrimal,
    SymbolicZero,
    custom_vjp_primal_tree_values,
    zero_from_primal,
)
from lamina_core.custom_derivatives._jvp import custom_jvp, custom_jvp_call_p
from lamina_core.custom_derivatives._vjp import custom_lin_p, custom_vjp, custom_vjp_call_p

__all__ = [
    "CustomVJPException",
    "CustomVJPPrimal",
    "SymbolicZero",
    "custom_jvp",
    "custom_jvp_call_p",
    "custom_lin_p",
    "custom_vjp",
    "custom_vjp_call_p",
    "custom_vjp_primal_tree_values",
    "zero_from_primal",
]
