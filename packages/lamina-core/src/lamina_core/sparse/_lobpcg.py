"""`lobpcg_standard` (`jax.experimental.sparse.linalg`): the top `k` eigenpairs of a Hermitian
operator by LOBPCG (Locally Optimal Block Preconditioned Conjugate Gradient), as JAX 0.10.2
computes them.

The iteration keeps three orthonormal blocks of `k` columns: `X` (the current eigenvector
estimates), `P` (the last search directions) and `R` (the residuals, with the span of `X` and
`P` projected out). Each step solves the `3k`-sized Rayleigh-Ritz problem of the operator on
`[X, P, R]`, takes its top `k` Ritz vectors as the new `X`, and the part of the step orthogonal
to them as the new `P`. Orthonormalization is SVQB (an eigendecomposition of the Gram matrix),
which zeroes out numerically dependent columns instead of failing. The loop stops after `m`
steps or once every residual is within `tol` of what rounding alone would leave.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.trace import Tracer, is_registered_value
from lamina_core.transforms import jit

Array = Any
Operator = Callable[[Array], Array]


def lobpcg_standard(
    A: Array | Operator, X: Array, m: int = 100, tol: Array | float | None = None
) -> tuple[Array, Array, Array]:
    """The top `k` eigenvalues and eigenvectors of `A` by LOBPCG (standard problem only).

    Args:
        A: an `(n, n)` Hermitian matrix, or a function computing its product with an `(n, j)`
            array.
        X: an `(n, k)` array of initial search directions, numerically independent (they
            are orthonormalized); `0 < 5 k < n`.
        m: the most iterations to run.
        tol: the convergence tolerance: an eigenpair `(lambda, v)` has converged once
            `|A v - lambda v| < tol * 10 * n * (lambda + |A v|)`; `None` means the
            machine epsilon of `X`'s dtype.

    Returns:
        `(theta, U, i)`: the `k` eigenvalues (descending), the `(n, k)` eigenvectors, and the
        number of iterations run.

    Raises:
        ValueError: `k` is 0 or not below `n / 5`, or `A`'s output has another dtype or
            shape than `X`'s columns.
    """
    result: tuple[Array, Array, Array]
    if isinstance(A, (np.ndarray, Tracer)) or is_registered_value(A):
        result = _lobpcg_standard_matrix(A, X, m, tol)
    else:
        result = _lobpcg_standard_callable(A, X, m, tol)
    return result


def _mm(a: Array, b: Array) -> Array:
    highest = lax.Precision.HIGHEST
    return lax.dot(a, b, precision=(highest, highest))


def _lobpcg_standard_matrix(A: Array, X: Array, m: int, tol: Array | float | None) -> Any:
    return _lobpcg_standard_callable(functools.partial(_mm, A), X, m, tol)


def _lobpcg_standard_callable(
    A: Operator, X: Array, m: int, tol: Array | float | None
) -> tuple[Array, Array, Array]:
    n, k = X.shape
    _check_inputs(A, X)
    if tol is None:
        tol = float(jnp.finfo(X.dtype).eps)
    X = _orthonormalize(X)
    P = _extend_basis(X, X.shape[1])
    AX = A(X)
    theta = jnp.sum(X * AX, axis=0, keepdims=True)
    R = AX - theta * X

    def cond(state: tuple[Any, ...]) -> Any:
        i, _, _, _, converged, _ = state
        return jnp.logical_and(i < m, converged < k)

    def body(state: tuple[Any, ...]) -> tuple[Any, ...]:
        i, X, P, R, _, theta = state
        R = _project_out(jnp.concatenate((X, P), axis=1), R)
        XPR = jnp.concatenate((X, P, R), axis=1)
        theta, Q = _rayleigh_ritz_orth(A, XPR)
        B = Q[:, :k]
        B = B / jnp.linalg.norm(B, ord=2, axis=0, keepdims=True)
        X = _mm(XPR, B)
        X = X / jnp.linalg.norm(X, ord=2, axis=0, keepdims=True)
        # The new directions: the Ritz vectors' remaining components, orthogonalized against
        # the top `k` in the Ritz basis before mapping back (XPR is orthonormal).
        q, _ = jnp.linalg.qr(Q[:k, k:].T)
        P = _mm(XPR, _mm(Q[:, k:], q))
        normP = jnp.linalg.norm(P, ord=2, axis=0, keepdims=True)
        P = P / jnp.where(normP == 0, 1.0, normP)
        AX = A(X)
        R = AX - theta[jnp.newaxis, :k] * X
        resid_norms = jnp.linalg.norm(R, ord=2, axis=0)
        # Converged: the residual is within the rounding error of computing it.
        reltol = jnp.linalg.norm(AX, ord=2, axis=0) + theta[:k]
        reltol = reltol * n
        reltol = reltol * 10
        converged = jnp.sum(resid_norms < tol * reltol)
        return i + 1, X, P, R, converged, theta[jnp.newaxis, :k]

    state = lax.while_loop(cond, body, (0, X, P, R, 0, theta))
    i, X, _, _, _, theta = state
    return theta[0, :], X, i


def _check_inputs(A: Operator, X: Array) -> None:
    n, k = X.shape
    if k == 0:
        raise ValueError(f"must have search dim > 0, got {k}")
    if k * 5 >= n:
        raise ValueError(f"expected search dim * 5 < matrix dim (got {k * 5}, {n})")
    probe = A(jnp.zeros((n, 1), dtype=X.dtype))
    if probe.dtype != X.dtype:
        raise ValueError(f"A, X must have same dtypes (were {probe.dtype}, {X.dtype})")
    if probe.shape != (n, 1):
        raise ValueError(f"A must be ({n}, {n}) matrix A, got output {probe.shape}")


def _eigh_descending(A: Array) -> tuple[Array, Array]:
    w, V = jnp.linalg.eigh(A)
    return w[::-1], V[:, ::-1]


def _svqb(X: Array) -> Array:
    """An orthonormal basis of `X`'s columns (SVQB): columns beyond `X`'s numerical rank are
    zero."""
    norms = jnp.linalg.norm(X, ord=2, axis=0, keepdims=True)
    X = X / jnp.where(norms == 0, 1.0, norms)
    inner = _mm(X.T, X)
    w, V = _eigh_descending(inner)
    # Eigenvalues below the largest times epsilon are directions X does not span.
    tau = jnp.finfo(X.dtype).eps * w[0]
    padded = jnp.maximum(w, tau)
    sqrted = jnp.where(tau > 0, padded, 1.0) ** (-0.5)  # tau == 0: X was all zeros
    orthoX = _mm(X, V * sqrted[jnp.newaxis, :])
    keep = ((w > tau) * (jnp.diag(inner) > 0.0))[jnp.newaxis, :]
    orthoX = orthoX * keep.astype(orthoX.dtype)
    norms = jnp.linalg.norm(orthoX, ord=2, axis=0, keepdims=True)
    keep = keep * (norms > 0.0)
    return orthoX / jnp.where(keep, norms, 1.0)


def _project_out(basis: Array, U: Array) -> Array:
    """`U`'s component orthogonal to the orthonormal `basis` (zero columns allowed), its
    nonzero columns orthonormal; columns that were mostly inside `basis` are dropped."""
    # Subtracting twice ("twice is enough"), orthonormalizing in between, then twice more.
    for _ in range(2):
        U = U - _mm(basis, _mm(basis.T, U))
        U = _orthonormalize(U)
    for _ in range(2):
        U = U - _mm(basis, _mm(basis.T, U))
    normU = jnp.linalg.norm(U, ord=2, axis=0, keepdims=True)
    return U * (normU >= 0.99).astype(U.dtype)


def _orthonormalize(basis: Array) -> Array:
    for _ in range(2):
        basis = _svqb(basis)
    return basis


def _rayleigh_ritz_orth(A: Operator, S: Array) -> tuple[Array, Array]:
    """The eigenpairs (descending) of `A` restricted to the orthonormal columns of `S`."""
    return _eigh_descending(_mm(S.T, A(S)))


def _extend_basis(X: Array, m: int) -> Array:
    """`m` columns completing the orthonormal `(n, k)` `X` to an orthonormal `k + m` set,
    deterministically (block Householder reflectors, not a random basis projected out)."""
    n, k = X.shape
    Xupper, Xlower = jnp.split(X, [k], axis=0)
    u, s, vt = jnp.linalg.svd(Xupper)
    y = jnp.concatenate([Xupper + _mm(u, vt), Xlower], axis=0)
    other = jnp.concatenate(
        [jnp.eye(m, dtype=X.dtype), jnp.zeros((n - k - m, m), dtype=X.dtype)], axis=0
    )
    w = _mm(y, vt.T * ((2 * (1 + s)) ** (-1 / 2))[jnp.newaxis, :])
    h = -2 * jnp.linalg.multi_dot([w, w[k:, :].T, other], precision=lax.Precision.HIGHEST)
    return jnp.at(h)[k:].add(other)


# Jitted as JAX's: once per matrix shape, or per operator for a callable `A`.
_lobpcg_standard_matrix = jit(_lobpcg_standard_matrix, static_argnames=["m"])
_lobpcg_standard_callable = jit(_lobpcg_standard_callable, static_argnames=["A", "m"])

__all__ = ["lobpcg_standard"]
