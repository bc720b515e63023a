"""`jax.lax.linalg`: Cholesky and LU factorizations, triangular solves, the conversion of
LU pivots to a permutation, the Hermitian eigendecomposition, QR (with LAPACK's Householder
pieces) and the singular value decomposition (primitives, rules and public functions); the
general eigendecomposition (`eig`), the reductions to Hessenberg, tridiagonal and Schur form,
tridiagonal solves, the products `symmetric_product`, `cholesky_update` and `ormqr`, the polar
decomposition `qdwh` and the algorithm enums. `geqrf` and `geqp3` are importable but not
listed in `__all__`, as JAX keeps them out of its public names."""

from lamina_core.lax.linalg import _ad as _ad
from lamina_core.lax.linalg import _batching as _batching
from lamina_core.lax.linalg._eig import eig as eig
from lamina_core.lax.linalg._eig import eig_p as eig_p
from lamina_core.lax.linalg._eigh import eigh as eigh
from lamina_core.lax.linalg._eigh import eigh_p as eigh_p
from lamina_core.lax.linalg._enums import EighImplementation as EighImplementation
from lamina_core.lax.linalg._enums import EigImplementation as EigImplementation
from lamina_core.lax.linalg._enums import SvdAlgorithm as SvdAlgorithm
from lamina_core.lax.linalg._geqp3 import geqp3 as geqp3
from lamina_core.lax.linalg._geqp3 import geqp3_p as geqp3_p
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
from lamina_core.lax.linalg._products import cholesky_update as cholesky_update
from lamina_core.lax.linalg._products import cholesky_update_p as cholesky_update_p
from lamina_core.lax.linalg._products import ormqr as ormqr
from lamina_core.lax.linalg._products import ormqr_p as ormqr_p
from lamina_core.lax.linalg._products import symmetric_product as symmetric_product
from lamina_core.lax.linalg._products import symmetric_product_p as symmetric_product_p
from lamina_core.lax.linalg._qdwh import qdwh as qdwh
from lamina_core.lax.linalg._qr import geqrf as geqrf
from lamina_core.lax.linalg._qr import geqrf_p as geqrf_p
from lamina_core.lax.linalg._qr import householder_product as householder_product
from lamina_core.lax.linalg._qr import householder_product_p as householder_product_p
from lamina_core.lax.linalg._qr import qr as qr
from lamina_core.lax.linalg._qr import qr_p as qr_p
from lamina_core.lax.linalg._reductions import hessenberg as hessenberg
from lamina_core.lax.linalg._reductions import hessenberg_p as hessenberg_p
from lamina_core.lax.linalg._reductions import schur as schur
from lamina_core.lax.linalg._reductions import schur_p as schur_p
from lamina_core.lax.linalg._reductions import tridiagonal as tridiagonal
from lamina_core.lax.linalg._reductions import tridiagonal_p as tridiagonal_p
from lamina_core.lax.linalg._svd import svd as svd
from lamina_core.lax.linalg._svd import svd_p as svd_p
from lamina_core.lax.linalg._tridiagonal_solve import tridiagonal_solve as tridiagonal_solve
from lamina_core.lax.linalg._tridiagonal_solve import tridiagonal_solve_p as tridiagonal_solve_p

__all__ = [
    "EigImplementation",
    "EighImplementation",
    "SvdAlgorithm",
    "cholesky",
    "cholesky_p",
    "cholesky_update",
    "cholesky_update_p",
    "eig",
    "eig_p",
    "eigh",
    "eigh_p",
    "hessenberg",
    "hessenberg_p",
    "householder_product",
    "householder_product_p",
    "lu",
    "lu_p",
    "lu_pivots_to_permutation",
    "lu_pivots_to_permutation_p",
    "ormqr",
    "ormqr_p",
    "qdwh",
    "qr",
    "qr_p",
    "schur",
    "schur_p",
    "svd",
    "svd_p",
    "symmetric_product",
    "symmetric_product_p",
    "triangular_solve",
    "triangular_solve_p",
    "tridiagonal",
    "tridiagonal_p",
    "tridiagonal_solve",
    "tridiagonal_solve_p",
]
