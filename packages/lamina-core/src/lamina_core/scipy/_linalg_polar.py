"""The polar decomposition (`polar`, by QDWH or SVD) and the eigenvalues of a symmetric tridiagonal
matrix (`eigh_tridiagonal`, by Sturm-sequence bisection) of `jax.scipy.linalg`, staged as
JAX 0.10.2 stages them.

Not here: `eigh_tridiagonal`'s eigenvectors (inverse iteration); they raise
NotImplementedError.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.ir import dtypes
from lamina_core.lax import linalg as lax_linalg
from lamina_core.numpy import dtype_of, shape_of
from lamina_core.transforms import Jitted

Array = Any


@partial(Jitted, static_argnames=("side", "method"))
def _polar_2d(
    a: Array, side: str, method: str, eps: float | None, max_iterations: int | None
) -> tuple[Array, Array]:
    m, n = shape_of(a)
    if method == "qdwh":
        if m >= n and side == "right":
            unitary, posdef, _, _ = lax_linalg.qdwh(a, is_hermitian=False, eps=eps)
        elif m < n and side == "left":
            a = jnp.conj(jnp.transpose(a))
            unitary, posdef, _, _ = lax_linalg.qdwh(a, is_hermitian=False, eps=eps)
            posdef = jnp.conj(jnp.transpose(posdef))
            unitary = jnp.conj(jnp.transpose(unitary))
        else:
            raise NotImplementedError(
                "method='qdwh' only supports mxn matrices where m < n where side='right' and "
                f"m >= n side='left', got {(m, n)} with side={side!r}"
            )
        return unitary, posdef
    if method != "svd":
        raise ValueError(f"Unknown polar decomposition method {method}.")
    u, s, vh = lax_linalg.svd(a, full_matrices=False)
    s = s.astype(dtype_of(u))
    # JAX runs this under default_matmul_precision("float32"): full-precision products.
    matmul = partial(jnp.matmul, precision=lax.Precision.HIGHEST)
    unitary = matmul(u, vh)
    if side == "right":
        posdef = matmul(jnp.conj(jnp.transpose(vh)) * s[None, :], vh)
    else:
        posdef = matmul(u * s[None, :], jnp.conj(jnp.transpose(u)))
    return unitary, posdef


@partial(Jitted, static_argnames=("side", "method"))
def polar(
    a: Any,
    side: str = "right",
    *,
    method: str = "qdwh",
    eps: float | None = None,
    max_iterations: int | None = None,
) -> tuple[Array, Array]:
    """(u, p) with a = u p (`side` 'right', p of shape (n, n)) or a = p u ('left', p of
    shape (m, m)): u has orthonormal columns (rows), p is Hermitian positive semidefinite.

    `method` is 'qdwh' (JAX's QR-based dynamically weighted Halley iteration: m >= n with
    side 'right', m < n with 'left') or 'svd'.
    """
    arr = jnp.asarray(a)
    if len(shape_of(arr)) < 2:
        raise ValueError("The input `a` must be at least a 2-D array.")
    if side not in ["right", "left"]:
        raise ValueError("The argument `side` must be either 'right' or 'left'.")
    signature = "(m,n)->(m,n),(n,n)" if side == "right" else "(m,n)->(m,n),(m,m)"
    one = partial(_polar_2d, side=side, method=method, eps=eps, max_iterations=max_iterations)
    out: tuple[Array, Array] = jnp.vectorize(one, signature=signature)(arr)
    return out


def _sturm_counts(
    alpha: Array, beta_sq: Array, pivmin: Array, alpha0_perturbation: Array, x: Array
) -> Array:
    """How many eigenvalues lie below each shift in `x`: the negative pivots of the LDL^T
    factorization of T - x, with JAX's unrolling (a peeled remainder, then blocks of 16)."""
    n = shape_of(alpha)[0]
    zeros = jnp.zeros(shape_of(x), dtype=np.int32)
    ones = jnp.ones(shape_of(x), dtype=np.int32)

    def step(i: Any, q: Array, count: Array) -> tuple[Array, Array]:
        q = alpha[i] - beta_sq[i - 1] / q - x
        count = jnp.where(q <= pivmin, count + 1, count)
        q = jnp.where(q <= pivmin, jnp.minimum(q, jnp.negative(pivmin)), q)
        return q, count

    q = alpha[0] - x
    count = jnp.where(q < 0, ones, zeros)
    q = jnp.where(alpha[0] == x, alpha0_perturbation, q)

    block = 16

    def unrolled(length: int) -> Any:
        def steps(args: tuple[Any, Array, Array]) -> tuple[Any, Array, Array]:
            start, q, count = args
            for j in range(length):
                q, count = step(start + j, q, count)
            return start + length, q, count

        return steps

    i, q, count = unrolled((n - 1) % block)((1, q, count))

    def more(args: tuple[Any, Array, Array]) -> Array:
        return jnp.less(args[0], n)

    _, _, count = lax.while_loop(more, unrolled(block), (i, q, count))
    return count


_SUPPORTED = (np.float32, np.float64, np.complex64, np.complex128)


@partial(Jitted, static_argnames=("eigvals_only", "select", "select_range"))
def eigh_tridiagonal(
    d: Any,
    e: Any,
    *,
    eigvals_only: bool = False,
    select: str = "a",
    select_range: tuple[float, float] | None = None,
    tol: float | None = None,
    key: Any = None,
) -> Array:
    """The ascending eigenvalues of the symmetric (Hermitian) tridiagonal matrix with diagonal
    `d` and off-diagonal `e`, by bisection on Sturm counts: all of them (`select='a'`) or
    those with indices in `select_range` ('i'). Only `eigvals_only=True` is implemented.

    Raises:
        TypeError: if `d` and `e` differ in dtype or are not float32/64 or complex64/128.
        ValueError: for a bad `select` or `select_range`.
        NotImplementedError: for eigenvectors (`eigvals_only=False`) or `select='v'`.
    """
    del key
    alpha = jnp.asarray(d)
    beta = jnp.asarray(e)
    a_dtype, b_dtype = dtype_of(alpha), dtype_of(beta)
    if a_dtype != b_dtype:
        raise TypeError(
            f"diagonal and off-diagonal values must have same dtype, got {a_dtype} and {b_dtype}"
        )
    if a_dtype not in _SUPPORTED or b_dtype not in _SUPPORTED:
        raise TypeError(
            "Only float32 and float64 inputs are supported as inputs to "
            f"jax.scipy.linalg.eigh_tridiagonal, got {a_dtype} and {b_dtype}"
        )
    if not eigvals_only:
        raise NotImplementedError(
            "eigh_tridiagonal eigenvectors (eigvals_only=False, inverse iteration with "
            "lax.linalg.tridiagonal_solve) are not implemented in Lamina yet."
        )
    n = shape_of(alpha)[0]
    if n <= 1:
        return jnp.real(alpha)
    if dtypes.issubdtype(a_dtype, np.complexfloating):
        alpha = jnp.real(alpha)
        beta_sq = jnp.real(beta * jnp.conj(beta))
        beta_abs = jnp.sqrt(beta_sq)
    else:
        beta_abs = jnp.abs(beta)
        beta_sq = jnp.square(beta)

    # Gershgorin bounds on the spectrum.
    row_sums = jnp.concatenate([beta_abs[:1], beta_abs[:-1] + beta_abs[1:], beta_abs[-1:]], axis=0)
    lambda_max = jnp.amax(alpha + row_sums)
    lambda_min = jnp.amin(alpha - row_sums)
    t_norm = jnp.maximum(jnp.abs(lambda_min), jnp.abs(lambda_max))

    real = dtype_of(alpha)
    finfo = np.finfo(real)
    one = np.ones([], dtype=real)
    safemin = np.maximum(one / finfo.max, (one + finfo.eps) * finfo.tiny)
    pivmin = safemin * jnp.maximum(1, jnp.amax(beta_sq))
    alpha0_perturbation = jnp.square(finfo.eps * beta_abs[0])
    abs_tol = finfo.eps * t_norm
    if tol is not None:
        abs_tol = jnp.maximum(tol, abs_tol)
    max_it = finfo.nmant + 1

    if select == "a":
        target_counts = jnp.arange(n, dtype=np.int32)
    elif select == "i":
        if select_range is None:
            raise ValueError("for select='i', select_range must be specified.")
        if select_range[0] > select_range[1]:
            raise ValueError("Got empty index range in select_range.")
        target_counts = jnp.arange(select_range[0], select_range[1] + 1, dtype=np.int32)
    elif select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    else:
        raise ValueError("'select must have a value in {'a', 'i', 'v'}.")

    # The starting interval: Gershgorin's, a little wider.
    fudge = 2.1
    # Staged from a constant array, as JAX stages `jnp.array(n) * fudge * eps * t_norm`.
    norm_slack = jnp.multiply(
        jnp.multiply(jnp.multiply(jnp.array(n, real), fudge), finfo.eps), t_norm
    )
    lower = lambda_min - norm_slack - 2 * fudge * pivmin
    upper = lambda_max + norm_slack + fudge * pivmin
    target_shape = np.shape(target_counts)
    lower = jnp.broadcast_to(lower, shape=target_shape)
    upper = jnp.broadcast_to(upper, shape=target_shape)
    mid = 0.5 * (upper + lower)
    pivmin = jnp.broadcast_to(pivmin, target_shape)
    alpha0_perturbation = jnp.broadcast_to(alpha0_perturbation, target_shape)

    def unconverged(args: tuple[Any, Array, Array, Array]) -> Array:
        i, lower, _, upper = args
        return jnp.logical_and(jnp.less(i, max_it), jnp.less(abs_tol, jnp.amax(upper - lower)))

    def bisect(args: tuple[Any, Array, Array, Array]) -> tuple[Any, Array, Array, Array]:
        i, lower, mid, upper = args
        counts = _sturm_counts(alpha, beta_sq, pivmin, alpha0_perturbation, mid)
        lower = jnp.where(counts <= target_counts, mid, lower)
        upper = jnp.where(counts > target_counts, mid, upper)
        mid = 0.5 * (lower + upper)
        return i + 1, lower, mid, upper

    _, _, mid, _ = lax.while_loop(unconverged, bisect, (0, lower, mid, upper))
    return mid
