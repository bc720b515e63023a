"""`lamina.numpy.linalg`: linear algebra as `jax.numpy.linalg` (see `lamina_core.numpy.linalg`)."""

from lamina_core.numpy.linalg import (
    SlogdetResult,
    cholesky,
    det,
    norm,
    slogdet,
    vector_norm,
)

__all__ = ["SlogdetResult", "cholesky", "det", "norm", "slogdet", "vector_norm"]
