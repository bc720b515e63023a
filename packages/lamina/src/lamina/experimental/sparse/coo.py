"""`jax.experimental.sparse.coo`: the `COO` matrix and its primitives.

Registers the primitives' lowering, as JAX's on CPU: each lowered as its jnp impl
(`mlir.lower_fun`), traced on the operand types.
"""

from lamina.interpreters import mlir
from lamina_core.sparse import (
    COO,
    COOInfo,
    coo_fromdense,
    coo_fromdense_impl,
    coo_fromdense_p,
    coo_matmat,
    coo_matmat_impl,
    coo_matmat_p,
    coo_matvec,
    coo_matvec_impl,
    coo_matvec_p,
    coo_todense,
    coo_todense_impl,
    coo_todense_p,
)

mlir.register_lowering(coo_todense_p, mlir.lower_fun(coo_todense_impl, multiple_results=False))
mlir.register_lowering(coo_fromdense_p, mlir.lower_fun(coo_fromdense_impl, multiple_results=True))
mlir.register_lowering(coo_matvec_p, mlir.lower_fun(coo_matvec_impl, multiple_results=False))
mlir.register_lowering(coo_matmat_p, mlir.lower_fun(coo_matmat_impl, multiple_results=False))

__all__ = [
    "COO",
    "COOInfo",
    "coo_fromdense",
    "coo_fromdense_p",
    "coo_matmat",
    "coo_matmat_p",
    "coo_matvec",
    "coo_matvec_p",
    "coo_todense",
    "coo_todense_p",
]
