"""`lamina.scipy.linalg`: as `jax.scipy.linalg` (see `lamina_core.scipy.linalg`)."""

from lamina_core.scipy.linalg import (
    block_diag,
    cho_factor,
    cho_solve,
    cholesky,
    lu,
    lu_factor,
    solve_triangular,
)

__all__ = [
    "block_diag",
    "cho_factor",
    "cho_solve",
    "cholesky",
    "lu",
    "lu_factor",
    "solve_triangular",
]
