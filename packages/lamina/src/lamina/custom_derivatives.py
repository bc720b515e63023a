"""`jax.custom_derivatives`: the decorators and what their rules see (`SymbolicZero`,
`CustomVJPPrimal`) under `symbolic_zeros=True`."""

from lamina_core.custom_derivatives import (
    CustomVJPPrimal,
    SymbolicZero,
    closure_convert,
    custom_gradient,
    custom_jvp,
    custom_jvp_call_p,
    custom_vjp,
    custom_vjp_call_p,
    custom_vjp_primal_tree_values,
    linear_call,
    remat_opt_p,
    zero_from_primal,
)

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
    "linear_call",
    "remat_opt_p",
    "zero_from_primal",
]
