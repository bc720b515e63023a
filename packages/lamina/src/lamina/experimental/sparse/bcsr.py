"""`jax.experimental.sparse.bcsr`: the `BCSR` array, its primitives and operations.

Registers the primitives' lowering, as JAX's on CPU: each lowered as its jnp impl
(`mlir.lower_fun`), traced on the operand types. (JAX lowers `bcsr_dot_general` of an
unbatched float matrix through a CPU sparse kernel instead; the values agree.)
"""

from lamina.interpreters import mlir
from lamina_core.sparse import (
    BCSR,
    BCSRProperties,
    bcsr_broadcast_in_dim,
    bcsr_concatenate,
    bcsr_dot_general,
    bcsr_dot_general_impl,
    bcsr_dot_general_p,
    bcsr_eliminate_zeros,
    bcsr_extract,
    bcsr_extract_impl,
    bcsr_extract_p,
    bcsr_fromdense,
    bcsr_fromdense_impl,
    bcsr_fromdense_p,
    bcsr_sum_duplicates,
    bcsr_todense,
    bcsr_todense_impl,
    bcsr_todense_p,
)

mlir.register_lowering(bcsr_fromdense_p, mlir.lower_fun(bcsr_fromdense_impl, multiple_results=True))
mlir.register_lowering(bcsr_todense_p, mlir.lower_fun(bcsr_todense_impl, multiple_results=False))
mlir.register_lowering(bcsr_extract_p, mlir.lower_fun(bcsr_extract_impl, multiple_results=False))
mlir.register_lowering(
    bcsr_dot_general_p, mlir.lower_fun(bcsr_dot_general_impl, multiple_results=False)
)

__all__ = [
    "BCSR",
    "BCSRProperties",
    "bcsr_broadcast_in_dim",
    "bcsr_concatenate",
    "bcsr_dot_general",
    "bcsr_dot_general_p",
    "bcsr_eliminate_zeros",
    "bcsr_extract",
    "bcsr_extract_p",
    "bcsr_fromdense",
    "bcsr_fromdense_p",
    "bcsr_sum_duplicates",
    "bcsr_todense",
    "bcsr_todense_p",
]
