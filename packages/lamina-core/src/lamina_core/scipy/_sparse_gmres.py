"""`jax.scipy.sparse.linalg.gmres`: restarted GMRES, as JAX 0.10.2 stages it.

Each restart runs up to `restart` Arnoldi steps from the current residual, building an
orthonormal Krylov basis V (classical Gram-Schmidt, repeated once when the projection removes
too much of the vector) and the Hessenberg matrix H with A V_k = V_{k+1} H. 'batched' solves
the small least-squares problem for the update once at the end, by normal equations;
'incremental' keeps H triangular by Givens rotations as it grows and stops the restart early
once the rotated residual is small enough.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.ir import dtypes
from lamina_core.lax import _convert_element_type
from lamina_core.numpy import at, dtype_of, shape_of
from lamina_core.scipy._sparse_linalg import (
    Operator,
    _add,
    _device_put,
    _dot,
    _einsum,
    _identity,
    _norm,
    _normalize_matvec,
    _sub,
)
from lamina_core.scipy.linalg import solve, solve_triangular
from lamina_core.tree import public
from lamina_core.tree.tree_util import tree_leaves, tree_map, tree_reduce, tree_structure

Array = Any

__all__ = ["gmres"]


def _safe_normalize(x: Any, thresh: Any = None) -> tuple[Any, Array]:
    """`(x / |x|, |x|)`, or zeros and 0 where |x| is at most `thresh` (epsilon by default)."""
    norm = _norm(x)
    dtype, weak_type = dtypes.result_type(*tree_leaves(x), return_weak_type_flag=True)
    if thresh is None:
        thresh = dtypes.finfo(dtype_of(norm)).eps
    thresh = thresh.astype(dtype).real
    use_norm = norm > thresh
    norm_cast = _convert_element_type(norm, dtype, weak_type)
    normalized = tree_map(lambda y: jnp.where(use_norm, y / norm_cast, 0.0), x)
    return normalized, jnp.where(use_norm, norm, 0.0)


def _project_on_columns(A: Any, v: Any) -> Array:
    """The coefficients of `v` on the columns of the basis `A`: A^H v, over the tree."""
    projected = tree_map(lambda X, y: _einsum("...n,...->n", X.conj(), y), A, v)
    return tree_reduce(operator.add, projected)


def _iterative_classical_gram_schmidt(
    Q: Any, x: Any, xnorm: Array, max_iterations: int = 2
) -> tuple[Any, Array]:
    """`x` orthogonalized against the columns of `Q`, and its coefficients there; repeated
    (up to `max_iterations` passes) while a pass removes more than 1 - 1/sqrt(2) of the norm."""
    Q0 = tree_leaves(Q)[0]
    r = jnp.zeros(shape_of(Q0)[-1], dtype=Q0.dtype)
    xnorm_scaled = xnorm / jnp.sqrt(2.0)

    def body(carry: Any) -> Any:
        k, q, r, qnorm_scaled = carry
        h = _project_on_columns(Q, q)
        Qh = tree_map(lambda X: _dot(X, h), Q)
        q = _sub(q, Qh)
        r = _add(r, h)

        def qnorm_cond(carry: Any) -> Array:
            k, not_done, _, _ = carry
            return jnp.logical_and(not_done, k < (max_iterations - 1))

        def qnorm(carry: Any) -> Any:
            k, _, q, _ = carry
            _, norm = _safe_normalize(q)
            return (k, False, q, norm / jnp.sqrt(2.0))

        _, _, q, qnorm_scaled = lax.while_loop(qnorm_cond, qnorm, (k, True, q, qnorm_scaled))
        return (k + 1, q, r, qnorm_scaled)

    def cond(carry: Any) -> Array:
        k, _, r, qnorm_scaled = carry
        _, rnorm = _safe_normalize(r)
        return jnp.logical_and(k < (max_iterations - 1), rnorm < qnorm_scaled)

    k, q, r, qnorm_scaled = body((0, x, r, xnorm_scaled))
    _, q, r, _ = lax.while_loop(cond, body, (k, q, r, qnorm_scaled))
    return q, r


def _kth_arnoldi_iteration(
    k: Array, A: Operator, M: Operator, V: Any, H: Array
) -> tuple[Any, Array, Array]:
    """Extend the basis `V` by column k + 1 (from M A V[:, k]) and `H` by row k; also whether
    the new vector vanished (breakdown: the Krylov space is invariant)."""
    dtype, _ = dtypes.result_type(*tree_leaves(V), return_weak_type_flag=True)
    eps = dtypes.finfo(dtype).eps
    v = tree_map(lambda x: x[..., k], V)
    v = M(A(v))
    _, v_norm_0 = _safe_normalize(v)
    v, h = _iterative_classical_gram_schmidt(V, v, v_norm_0, max_iterations=2)
    unit_v, v_norm_1 = _safe_normalize(v, thresh=eps * v_norm_0)
    V = tree_map(lambda X, y: at(X)[..., k + 1].set(y), V, unit_v)
    h = at(h)[k + 1].set(v_norm_1.astype(dtype))
    H = at(H)[k, :].set(h)
    return V, H, v_norm_1 == 0.0


def _rotate_vectors(H: Array, i: Any, cs: Array, sn: Array) -> Array:
    x1, y1 = H[i], H[i + 1]
    x2 = cs.conj() * x1 - sn.conj() * y1
    y2 = sn * x1 + cs * y1
    H = at(H)[i].set(x2)
    return at(H)[i + 1].set(y2)


def _givens_rotation(a: Array, b: Array) -> tuple[Array, Array]:
    """(cos, sin) of the rotation zeroing `b` against `a`, dividing by the larger of the two."""
    b_zero = abs(b) == 0
    a_lt_b = abs(a) < abs(b)
    t = -jnp.where(a_lt_b, a, b) / jnp.where(a_lt_b, b, a)
    r = lax.rsqrt(1 + abs(t) ** 2).astype(t.dtype)
    cs = jnp.where(b_zero, 1, jnp.where(a_lt_b, r * t, r))
    sn = jnp.where(b_zero, 0, jnp.where(a_lt_b, r, r * t))
    return cs, sn


def _apply_givens_rotations(H_row: Array, givens: Array, k: Array) -> tuple[Array, Array]:
    """Row k of H with the k earlier rotations applied, and a new one zeroing its last entry."""

    def apply_ith(i: Any, H_row: Array) -> Array:
        return _rotate_vectors(H_row, i, *givens[i, :])

    R_row = lax.fori_loop(0, k, apply_ith, H_row)
    factors = _givens_rotation(R_row[k], R_row[k + 1])
    givens = at(givens)[k, :].set(factors)
    return _rotate_vectors(R_row, k, *factors), givens


Restart = Callable[[Operator, Any, Any, Any, Array, Array, int, Operator], tuple[Any, Any, Array]]


def _gmres_incremental(
    A: Operator, b: Any, x0: Any, unit_residual: Any, residual_norm: Array, ptol: Array,
    restart: int, M: Operator,
) -> tuple[Any, Any, Array]:  # fmt: skip
    V = tree_map(
        lambda x: jnp.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)), unit_residual
    )
    dtype = dtypes.result_type(*tree_leaves(b))
    R = jnp.eye(restart, restart + 1, dtype=dtype)  # the triangularized H, transposed
    givens = jnp.zeros((restart, 2), dtype=dtype)
    beta_vec = jnp.zeros((restart + 1), dtype=dtype)
    beta_vec = at(beta_vec)[0].set(residual_norm.astype(dtype))

    def cond(carry: Any) -> Array:
        k, err, _, _, _, _ = carry
        return jnp.logical_and(k < restart, err > ptol)

    def arnoldi_qr_step(carry: Any) -> Any:
        k, _, V, R, beta_vec, givens = carry
        V, H, _ = _kth_arnoldi_iteration(k, A, M, V, R)
        R_row, givens = _apply_givens_rotations(H[k, :], givens, k)
        R = at(R)[k, :].set(R_row)
        beta_vec = _rotate_vectors(beta_vec, k, *givens[k, :])
        err = abs(beta_vec[k + 1])
        return k + 1, err, V, R, beta_vec, givens

    carry = lax.while_loop(cond, arnoldi_qr_step, (0, residual_norm, V, R, beta_vec, givens))
    _, residual_norm, V, R, beta_vec, _ = carry
    y = solve_triangular(R[:, :-1].T, beta_vec[:-1])
    x = _add(x0, tree_map(lambda X: _dot(X[..., :-1], y), V))
    unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x))))
    return x, unit_residual, residual_norm


def _lstsq(a: Array, b: Array) -> Array:
    a2 = _dot(a.T.conj(), a)
    b2 = _dot(a.T.conj(), b)
    return solve(a2, b2, assume_a="pos")


def _gmres_batched(
    A: Operator, b: Any, x0: Any, unit_residual: Any, residual_norm: Array, ptol: Array,
    restart: int, M: Operator,
) -> tuple[Any, Any, Array]:  # fmt: skip
    del ptol  # a batched restart always runs to the end (or to breakdown)
    V = tree_map(
        lambda x: jnp.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)), unit_residual
    )
    dtype, weak_type = dtypes.result_type(*tree_leaves(b), return_weak_type_flag=True)
    H = _convert_element_type(jnp.eye(restart, restart + 1, dtype=dtype), dtype, weak_type)

    def cond(carry: Any) -> Array:
        _, _, breakdown, k = carry
        return jnp.logical_and(k < restart, jnp.logical_not(breakdown))

    def arnoldi_process(carry: Any) -> Any:
        V, H, _, k = carry
        V, H, breakdown = _kth_arnoldi_iteration(k, A, M, V, H)
        return V, H, breakdown, k + 1

    V, H, _, _ = lax.while_loop(cond, arnoldi_process, (V, H, False, 0))
    beta_vec = at(jnp.zeros_like(H, shape=(restart + 1,)))[0].set(residual_norm.astype(dtype))
    y = _lstsq(H.T, beta_vec)
    x = _add(x0, tree_map(lambda X: _dot(X[..., :-1], y), V))
    unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x))))
    return x, unit_residual, residual_norm


def _gmres_solve(
    A: Operator, b: Any, x0: Any, atol: Array, ptol: Array, restart: int, maxiter: int,
    M: Operator, gmres_func: Restart,
) -> Any:  # fmt: skip
    unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x0))))

    def cond(value: Any) -> Array:
        _, k, _, residual_norm = value
        return jnp.logical_and(k < maxiter, residual_norm > atol)

    def body(value: Any) -> Any:
        x, k, unit_residual, residual_norm = value
        x, unit_residual, residual_norm = gmres_func(
            A, b, x, unit_residual, residual_norm, ptol, restart, M
        )
        return x, k + 1, unit_residual, residual_norm

    x_final, *_ = lax.while_loop(cond, body, (x0, 0, unit_residual, residual_norm))
    return x_final


def gmres(
    A: Any,
    b: Any,
    x0: Any = None,
    *,
    tol: float = 1e-5,
    atol: float = 0.0,
    restart: int = 20,
    maxiter: int | None = None,
    M: Any = None,
    solve_method: str = "batched",
) -> tuple[Any, Array]:
    """`(x, info)`: the solution of `A(x) = b` by GMRES restarted every `restart` steps, for
    any square `A`; `info` is -1 if the solution holds NaNs, else 0."""
    if x0 is None:
        x0 = tree_map(jnp.zeros_like, b)
    if M is None:
        M = _identity
    A = _normalize_matvec(A)
    M = _normalize_matvec(M)
    b, x0 = _device_put((b, x0))
    size = sum(int(leaf.size) for leaf in tree_leaves(b))
    if maxiter is None:
        maxiter = 10 * size  # as SciPy
    restart = min(restart, size)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(
            "x0 and b must have matching tree structure: "
            f"{public.tree_structure(x0)} vs {public.tree_structure(b)}"
        )
    b_norm = _norm(b)
    atol_ = jnp.maximum(tol * b_norm, atol)
    Mb_norm = _norm(M(b))
    ptol = Mb_norm * jnp.minimum(1.0, atol_ / b_norm)
    gmres_func: Restart
    if solve_method == "incremental":
        gmres_func = _gmres_incremental
    elif solve_method == "batched":
        gmres_func = _gmres_batched
    else:
        raise ValueError(
            f"invalid solve_method {solve_method}, must be either 'incremental' or 'batched'"
        )

    def solve_it(A: Operator, b: Any) -> Any:
        return _gmres_solve(A, b, x0, atol_, ptol, restart, maxiter, M, gmres_func)

    x = lax.custom_linear_solve(A, b, solve=solve_it, transpose_solve=solve_it)
    return x, jnp.where(jnp.isnan(_norm(x)), -1, 0)
