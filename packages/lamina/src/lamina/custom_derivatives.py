"""`jax.custom_derivatives`: the decorators and what their rules see (`SymbolicZero`,
`CustomVJPPrimal`) under `symbolic_zeros=True`."""

from lamina_core.custom_derivatives import (
    CustomVJPPrimal,
    SymbolicZero,
    custom_jvp,
    custom_vjp,
    custom_vjp_primal_tree_values,
    zero_from_primal,
)
from lamina_core.custom_derivatives._closures import closure_convert, custom_gradient
from lamina_core.custom_derivatives._jvp import custom_jvp_call_p
from lamina_core.custom_derivatives._vjp import custom_vjp_call_p

__all__ = [
    "CustomVJPPrimal",
    "SymbolicZero",
    "closure_convert",
    "custom_gradient",
    "custom_jvp",
    "custom_jvp_call_p",
    "custom_vjp",
    "custom_vjp_call_p",
    "custom_vjp_primal_tree_values",
    "zero_from_primal",
]
