"""`lamina.lax.linalg`: JAX's `lax.linalg` API (the public alias of `lamina_core.lax.linalg`)."""

from lamina_core.lax.linalg import EighImplementation as EighImplementation
from lamina_core.lax.linalg import EigImplementation as EigImplementation
from lamina_core.lax.linalg import SvdAlgorithm as SvdAlgorithm
from lamina_core.lax.linalg import cholesky as cholesky
from lamina_core.lax.linalg import cholesky_p as cholesky_p
from lamina_core.lax.linalg import cholesky_update as cholesky_update
from lamina_core.lax.linalg import cholesky_update_p as cholesky_update_p
from lamina_core.lax.linalg import eig as eig
from lamina_core.lax.linalg import eig_p as eig_p
from lamina_core.lax.linalg import eigh as eigh
from lamina_core.lax.linalg import eigh_p as eigh_p
from lamina_core.lax.linalg import hessenberg as hessenberg
from lamina_core.lax.linalg import hessenberg_p as hessenberg_p
from lamina_core.lax.linalg import householder_product as householder_product
from lamina_core.lax.linalg import householder_product_p as householder_product_p
from lamina_core.lax.linalg import lu as lu
from lamina_core.lax.linalg import lu_p as lu_p
from lamina_core.lax.linalg import lu_pivots_to_permutation as lu_pivots_to_permutation
from lamina_core.lax.linalg import lu_pivots_to_permutation_p as lu_pivots_to_permutation_p
from lamina_core.lax.linalg import ormqr as ormqr
from lamina_core.lax.linalg import ormqr_p as ormqr_p
from lamina_core.lax.linalg import qdwh as qdwh
from lamina_core.lax.linalg import qr as qr
from lamina_core.lax.linalg import qr_p as qr_p
from lamina_core.lax.linalg import schur as schur
from lamina_core.lax.linalg import schur_p as schur_p
from lamina_core.lax.linalg import svd as svd
from lamina_core.lax.linalg import svd_p as svd_p
from lamina_core.lax.linalg import symmetric_product as symmetric_product
from lamina_core.lax.linalg import symmetric_product_p as symmetric_product_p
from lamina_core.lax.linalg import triangular_solve as triangular_solve
from lamina_core.lax.linalg import triangular_solve_p as triangular_solve_p
from lamina_core.lax.linalg import tridiagonal as tridiagonal
from lamina_core.lax.linalg import tridiagonal_p as tridiagonal_p
from lamina_core.lax.linalg import tridiagonal_solve as tridiagonal_solve
from lamina_core.lax.linalg import tridiagonal_solve_p as tridiagonal_solve_p

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
