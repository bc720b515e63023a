"""`jax.scipy.sparse.linalg` for Lamina: the Krylov solvers `cg`, `bicgstab` (see
`lamina_core.scipy._sparse_linalg`) and `gmres` (see `lamina_core.scipy._sparse_gmres`)."""

from lamina_core.scipy._sparse_gmres import gmres
from lamina_core.scipy._sparse_linalg import bicgstab, cg

__all__ = ["bicgstab", "cg", "gmres"]
