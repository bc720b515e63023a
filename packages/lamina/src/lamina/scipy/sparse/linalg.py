"""`lamina.scipy.sparse.linalg`: `cg`, `bicgstab` and `gmres`, as `jax.scipy.sparse.linalg`
(see `lamina_core.scipy.sparse.linalg`)."""

from lamina_core.scipy.sparse.linalg import bicgstab, cg, gmres

__all__ = ["bicgstab", "cg", "gmres"]
