"""`lamina.scipy.linalg`: as `jax.scipy.linalg` (see `lamina_core.scipy.linalg`)."""

from lamina_core.scipy.linalg import (
    block_diag,
    cho_factor,
    cho_solve,
    cholesky,
    det,
    eigh,
    inv,
    lu,
    lu_factor,
    lu_solve,
    qr,
    solve,
    solve_triangular,
    svd,
)

__all__ = [
    "block_diag",
    "cho_factor",
    "cho_solve",
    "cholesky",
    "det",
    "eigh",
    "inv",
    "lu",
    "lu_factor",
    "lu_solve",
    "qr",
    "solve",
    "solve_triangular",
    "svd",
]
