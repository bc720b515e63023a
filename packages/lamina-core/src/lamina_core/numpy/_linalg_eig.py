"""The nonsymmetric eigendecomposition of `lamina.numpy.linalg` on `lax.linalg.eig`, as JAX
0.10.2 builds it: `eig` (eigenvalues and right eigenvectors) and `eigvals` (jitted, as JAX's).
Both return complex arrays (complex64 for 32-bit input, complex128 for 64-bit input) whatever
the eigenvalues are; LAPACK's `geev` computes them, so they exist on CPU only, as in JAX."""

from __future__ import annotations

from typing import Any, NamedTuple

from lamina_core.lax import linalg as lax_linalg
from lamina_core.numpy._promote import promote_dtypes_inexact
from lamina_core.numpy._reductions import ensure_arraylike
from lamina_core.numpy._util import Array
from lamina_core.transforms import Jitted


class EigResult(NamedTuple):
    """`eig`'s result: the eigenvalues and the right eigenvectors as columns."""

    eigenvalues: Array
    eigenvectors: Array


def eig(a: Any) -> EigResult:
    """Eigenvalues `w` (`..., M`) and right eigenvectors `v` (`..., M, M`, column `v[..., :, i]`
    for `w[..., i]`) of each square matrix in `a`; each eigenvector has unit 2-norm."""
    (a,) = ensure_arraylike("jnp.linalg.eig", a)
    (a,) = promote_dtypes_inexact(a)
    w, v = lax_linalg.eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


@Jitted
def eigvals(a: Any) -> Array:
    """The eigenvalues (`..., M`) of each square matrix in `a` (`..., M, M`)."""
    (a,) = ensure_arraylike("jnp.linalg.eigvals", a)
    (a,) = promote_dtypes_inexact(a)
    (w,) = lax_linalg.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)
    return w


__all__ = ["EigResult", "eig", "eigvals"]
