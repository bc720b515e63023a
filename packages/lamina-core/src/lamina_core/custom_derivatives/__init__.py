"""User-defined derivative and batching rules: `custom_jvp`, `custom_vjp` and `custom_vmap`
(`_custom_batching`, JAX's `jax.custom_batching`), as JAX's.

A decorated function binds one call primitive (`custom_jvp_call`, `custom_vjp_call`) whose
`call_jaxpr` is the function traced for the arguments' types; values it closes over become
leading operands (`num_consts`). Staging records one equation, evaluation and lowering run
the jaxpr, and only differentiation looks at the user's rules (`_jvp`, `_vjp`).
`linear_call` (`_linear_call`) is a call whose transpose is the user's.
"""

from lamina_core.custom_derivatives._common import (
    CustomVJPException,
    CustomVJPPrimal,
    RuleName,
    SymbolicZero,
    custom_vjp_primal_tree_values,
    zero_from_primal,
)
from lamina_core.custom_derivatives._jvp import custom_jvp, custom_jvp_call_p
from lamina_core.custom_derivatives._linear_call import (
    linear_call as linear_call,
)
from lamina_core.custom_derivatives._linear_call import (
    linear_call_p as linear_call_p,
)
from lamina_core.custom_derivatives._linear_call import (
    remat_opt_p as remat_opt_p,
)
from lamina_core.custom_derivatives._vjp import custom_lin_p, custom_vjp, custom_vjp_call_p

# Registered at import: the batching rules of both call primitives, and `custom_vmap`.
from lamina_core.custom_derivatives import _batching as _batching  # isort: skip
from lamina_core.custom_derivatives import _custom_batching as _custom_batching  # isort: skip
from lamina_core.custom_derivatives._closures import (
    closure_convert as closure_convert,
)
from lamina_core.custom_derivatives._closures import (
    custom_gradient as custom_gradient,
)
from lamina_core.custom_derivatives._custom_batching import (
    custom_vmap as custom_vmap,
)
from lamina_core.custom_derivatives._custom_batching import (
    custom_vmap_p as custom_vmap_p,
)
from lamina_core.custom_derivatives._custom_batching import (
    install_stack as install_stack,
)
from lamina_core.custom_derivatives._custom_batching import (
    sequential_vmap as sequential_vmap,
)

__all__ = [
    "CustomVJPException",
    "CustomVJPPrimal",
    "RuleName",
    "SymbolicZero",
    "custom_jvp",
    "custom_jvp_call_p",
    "custom_lin_p",
    "custom_vjp",
    "custom_vjp_call_p",
    "custom_vjp_primal_tree_values",
    "zero_from_primal",
]
