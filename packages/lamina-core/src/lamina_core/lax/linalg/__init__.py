"""`jax.lax.linalg`'s first slice: Cholesky and LU factorizations, triangular solves, and
the conversion of LU pivots to a permutation (primitives, rules and public functions)."""

from lamina_core.lax.linalg import _ad as _ad
from lamina_core.lax.linalg import _batching as _batching
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

__all__ = [
    "cholesky",
    "cholesky_p",
    "lu",
    "lu_p",
    "lu_pivots_to_permutation",
    "lu_pivots_to_permutation_p",
    "triangular_solve",
    "triangular_solve_p",
]
