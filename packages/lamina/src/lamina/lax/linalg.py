"""`lamina.lax.linalg`: JAX's `lax.linalg` API (the public alias of `lamina_core.lax.linalg`)."""

from lamina_core.lax.linalg import cholesky as cholesky
from lamina_core.lax.linalg import cholesky_p as cholesky_p
from lamina_core.lax.linalg import eigh as eigh
from lamina_core.lax.linalg import eigh_p as eigh_p
from lamina_core.lax.linalg import householder_product as householder_product
from lamina_core.lax.linalg import householder_product_p as householder_product_p
from lamina_core.lax.linalg import lu as lu
from lamina_core.lax.linalg import lu_p as lu_p
from lamina_core.lax.linalg import lu_pivots_to_permutation as lu_pivots_to_permutation
from lamina_core.lax.linalg import lu_pivots_to_permutation_p as lu_pivots_to_permutation_p
from lamina_core.lax.linalg import qr as qr
from lamina_core.lax.linalg import qr_p as qr_p
from lamina_core.lax.linalg import svd as svd
from lamina_core.lax.linalg import svd_p as svd_p
from lamina_core.lax.linalg import triangular_solve as triangular_solve
from lamina_core.lax.linalg import triangular_solve_p as triangular_solve_p

__all__ = [
    "cholesky",
    "cholesky_p",
    "eigh",
    "eigh_p",
    "householder_product",
    "householder_product_p",
    "lu",
    "lu_p",
    "lu_pivots_to_permutation",
    "lu_pivots_to_permutation_p",
    "qr",
    "qr_p",
    "svd",
    "svd_p",
    "triangular_solve",
    "triangular_solve_p",
]
