"""`jax.lax.linalg`: Cholesky and LU factorizations, triangular solves, the conversion of
LU pivots to a permutation, the Hermitian eigendecomposition, QR (with LAPACK's Householder
pieces) and the singular value decomposition (primitives, rules and public functions).
`geqrf` is importable but not listed in `__all__`, as JAX keeps it out of its public names."""

from lamina_core.lax.linalg import _ad as _ad
from lamina_core.lax.linalg import _batching as _batching
from lamina_core.lax.linalg._eigh import eigh as eigh
from lamina_core.lax.linalg._eigh import eigh_p as eigh_p
from lamina_core.lax.linalg._primitives import (
    cholesky as cholesky,
)
from lamina_core.lax.linalg._primitives import (
    cholesky_p as cholesky_p,
)
from lamina_core.lax.linalg._primitives import (
    lu as lu,
)
from lamina_core.lax.linalg._primitives import (
    lu_p as lu_p,
)
from lamina_core.lax.linalg._primitives import (
    lu_pivots_to_permutation as lu_pivots_to_permutation,
)
from lamina_core.lax.linalg._primitives import (
    lu_pivots_to_permutation_p as lu_pivots_to_permutation_p,
)
from lamina_core.lax.linalg._primitives import (
    triangular_solve as triangular_solve,
)
from lamina_core.lax.linalg._primitives import (
    triangular_solve_p as triangular_solve_p,
)
from lamina_core.lax.linalg._qr import geqrf as geqrf
from lamina_core.lax.linalg._qr import geqrf_p as geqrf_p
from lamina_core.lax.linalg._qr import householder_product as householder_product
from lamina_core.lax.linalg._qr import householder_product_p as householder_product_p
from lamina_core.lax.linalg._qr import qr as qr
from lamina_core.lax.linalg._qr import qr_p as qr_p
from lamina_core.lax.linalg._svd import svd as svd
from lamina_core.lax.linalg._svd import svd_p as svd_p

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
