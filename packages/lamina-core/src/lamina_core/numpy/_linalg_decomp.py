"""The decompositions of `lamina.numpy.linalg` built on `lax.linalg` as JAX 0.10.2 builds
them (jitted as JAX's are, so their jaxprs print alike): `eigh`, `eigvalsh` and `qr`."""

from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

import lamina_core.numpy as jnp
from lamina_core.lax import linalg as lax_linalg
from lamina_core.numpy._promote import promote_dtypes_inexact
from lamina_core.numpy._reductions import ensure_arraylike
from lamina_core.numpy._util import Array
from lamina_core.transforms import Jitted


class QRResult(NamedTuple):
    """`qr`'s result: the unitary `Q` and the upper triangular `R`."""

    Q: Array
    R: Array


class EighResult(NamedTuple):
    """`eigh`'s result: ascending eigenvalues and the eigenvectors as columns."""

    eigenvalues: Array
    eigenvectors: Array


def _lower_from_uplo(uplo: str | None) -> bool:
    if uplo is None or uplo == "L":
        return True
    if uplo == "U":
        return False
    raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {uplo}")


@partial(Jitted, static_argnames=("UPLO", "symmetrize_input"))
def eigh(a: Any, UPLO: str | None = None, symmetrize_input: bool = True) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors of each Hermitian matrix in `a` (`..., M, M`);
    `UPLO` names the triangle read when `symmetrize_input` is False."""
    (a,) = ensure_arraylike("jnp.linalg.eigh", a)
    lower = _lower_from_uplo(UPLO)
    (a,) = promote_dtypes_inexact(a)
    v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=symmetrize_input)
    return EighResult(w, v)


@partial(Jitted, static_argnames=("UPLO", "symmetrize_input"))
def eigvalsh(a: Any, UPLO: str | None = "L", *, symmetrize_input: bool = True) -> Array:
    """The ascending eigenvalues of each Hermitian matrix in `a` (`..., M, M`)."""
    (a,) = ensure_arraylike("jnp.linalg.eigvalsh", a)
    (a,) = promote_dtypes_inexact(a)
    w, _ = eigh(a, UPLO, symmetrize_input=symmetrize_input)
    return w


@partial(Jitted, static_argnames=("mode",))
def qr(a: Any, mode: str = "reduced") -> Array | QRResult:
    """The QR decomposition of each matrix in `a` (`..., M, N`), as `numpy.linalg.qr`: `mode`
    "reduced" (`K = min(M, N)` columns of `Q`), "complete" (square `Q`), "r" (`R` alone) or
    "raw" (LAPACK's Householder form, transposed, and its scales)."""
    (a,) = ensure_arraylike("jnp.linalg.qr", a)
    (a,) = promote_dtypes_inexact(a)
    if mode == "raw":
        a, taus = lax_linalg.geqrf(a)
        return QRResult(jnp.matrix_transpose(a), taus)
    if mode in ("reduced", "r", "full"):
        full_matrices = False
    elif mode == "complete":
        full_matrices = True
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    q, r = lax_linalg.qr(a, pivoting=False, full_matrices=full_matrices)
    if mode == "r":
        return r
    return QRResult(q, r)


__all__ = ["EighResult", "QRResult", "eigh", "eigvalsh", "qr"]
