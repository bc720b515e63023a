"""`jax.experimental.sparse.csr`: the `CSR` and `CSC` matrices and the CSR primitives.

Registers the primitives' lowering, as JAX's on CPU: each lowered as its jnp impl
(`mlir.lower_fun`), traced on the operand types.
"""

from lamina.interpreters import mlir
from lamina_core.sparse import (
    CSC,
    CSR,
    csr_fromdense,
    csr_fromdense_impl,
    csr_fromdense_p,
    csr_matmat,
    csr_matmat_impl,
    csr_matmat_p,
    csr_matvec,
    csr_matvec_impl,
    csr_matvec_p,
    csr_todense,
    csr_todense_impl,
    csr_todense_p,
)

mlir.register_lowering(csr_todense_p, mlir.lower_fun(csr_todense_impl, multiple_results=False))
mlir.register_lowering(csr_fromdense_p, mlir.lower_fun(csr_fromdense_impl, multiple_results=True))
mlir.register_lowering(csr_matvec_p, mlir.lower_fun(csr_matvec_impl, multiple_results=False))
mlir.register_lowering(csr_matmat_p, mlir.lower_fun(csr_matmat_impl, multiple_results=False))

__all__ = [
    "CSC",
    "CSR",
    "csr_fromdense",
    "csr_fromdense_p",
    "csr_matmat",
    "csr_matmat_p",
    "csr_matvec",
    "csr_matvec_p",
    "csr_todense",
    "csr_todense_p",
]
