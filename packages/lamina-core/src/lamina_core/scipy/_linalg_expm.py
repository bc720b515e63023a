"""The matrix exponential of `jax.scipy.linalg` (`expm`: Pade approximants with scaling and
squaring, as JAX 0.10.2 and Higham 2005 choose them) and its Frechet derivative
(`expm_frechet`, the jvp of `expm`).

The degree of the approximant is picked at run time from the 1-norm (`lax.switch` over the
degrees); the squarings undo the scaling in a `scan` of `cond`s, and a norm needing more
than `max_squarings` squarings gives NaNs. Derivatives come from differentiating those
operations, as in JAX, so the staged equations and the numbers match JAX's.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.numpy import dtype_of, promote_dtypes_inexact, shape_of
from lamina_core.scipy._linalg_triangular import solve_triangular
from lamina_core.transforms import Jitted, jvp

Array = Any


@partial(Jitted, static_argnames=("upper_triangular", "max_squarings"))
def expm(A: Any, *, upper_triangular: bool = False, max_squarings: int = 16) -> Array:
    """The matrix exponential of each square matrix in `A`.

    Args:
        A: an array of shape (..., n, n).
        upper_triangular: whether `A` is upper triangular (the Pade quotient is then a
            triangular solve).
        max_squarings: the most squarings the scaling may need; beyond it the result is NaN.

    Raises:
        ValueError: if `A` is not a (batched) square matrix.
    """
    (A,) = promote_dtypes_inexact(A)
    shape = shape_of(A)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape={shape}.")
    if len(shape) > 2:
        one = partial(expm, upper_triangular=upper_triangular, max_squarings=max_squarings)
        return jnp.vectorize(one, signature="(n,n)->(n,n)")(A)
    P, Q, n_squarings = _calc_P_Q(jnp.asarray(A))

    def nan_result(args: tuple[Array, Array, Array]) -> Array:
        return jnp.full_like(args[0], np.nan)

    def pade_result(args: tuple[Array, Array, Array]) -> Array:
        _, P, Q = args
        R = _solve_P_Q(P, Q, upper_triangular)
        return _squaring(R, n_squarings, max_squarings)

    return lax.cond(n_squarings > max_squarings, nan_result, pade_result, (A, P, Q))


# Per precision: the largest 1-norm a Pade approximant handles without scaling, and the
# 1-norm thresholds below which the lower degrees are accurate enough (Higham 2005).
_F64_MAXNORM = 5.371920351148152
_F64_THRESHOLDS: tuple[float, ...] = (
    1.495585217958292e-002,
    2.539398330063230e-001,
    9.504178996162932e-001,
    2.097847961257068e000,
)
_F32_MAXNORM = 3.925724783138660
_F32_THRESHOLDS: tuple[float, ...] = (4.258730016922831e-001, 1.880152677804762e000)


@Jitted
def _calc_P_Q(A: Array) -> tuple[Array, Array, Array]:
    """Numerator and denominator of the Pade approximant of the scaled `A`, and the number of
    squarings the scaling needs."""
    shape = shape_of(A)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError("expected A to be a square matrix")
    A_L1 = jnp.linalg.norm(A, 1)
    dtype = dtype_of(A)
    if dtype in (np.float64, np.complex128):
        maxnorm, thresholds = _F64_MAXNORM, _F64_THRESHOLDS
        degrees = [_pade3, _pade5, _pade7, _pade9, _pade13]
    elif dtype in (np.float32, np.complex64):
        maxnorm, thresholds = _F32_MAXNORM, _F32_THRESHOLDS
        degrees = [_pade3, _pade5, _pade7]
    else:
        raise TypeError(f"A.dtype={dtype} is not supported.")
    n_squarings = jnp.maximum(0, jnp.floor(jnp.log2(A_L1 / maxnorm)))
    A = A / jnp.power(2, n_squarings.astype(dtype))
    conds = jnp.array(thresholds, dtype=dtype_of(A_L1))
    idx = jnp.digitize(A_L1, conds)
    U, V = lax.switch(idx, degrees, A)
    P = U + V
    Q = jnp.negative(U) + V
    return P, Q, n_squarings


def _solve_P_Q(P: Array, Q: Array, upper_triangular: bool = False) -> Array:
    if upper_triangular:
        return solve_triangular(Q, P)
    return jnp.linalg.solve(Q, P)


def _precise_dot(A: Array, B: Array) -> Array:
    return jnp.dot(A, B, precision=lax.Precision.HIGHEST)


@partial(Jitted, static_argnums=2)
def _squaring(R: Array, n_squarings: Array, max_squarings: int) -> Array:
    """R squared `n_squarings` times, as a scan of `max_squarings` conditional squarings."""

    def square(x: Array) -> Array:
        return _precise_dot(x, x)

    def keep(x: Array) -> Array:
        return x

    def step(carry: Array, i: Array) -> tuple[Array, None]:
        return lax.cond(i < n_squarings, square, keep, carry), None

    out, _ = lax.scan(step, R, jnp.arange(max_squarings, dtype=dtype_of(n_squarings)))
    return out


def _identity_like(A: Array) -> Array:
    M, N = shape_of(A)
    return jnp.eye(M, N, dtype=dtype_of(A))


def _pade3(A: Array) -> tuple[Array, Array]:
    b = (120.0, 60.0, 12.0, 1.0)
    ident = _identity_like(A)
    A2 = _precise_dot(A, A)
    U = _precise_dot(A, b[3] * A2 + b[1] * ident)
    V = b[2] * A2 + b[0] * ident
    return U, V


def _pade5(A: Array) -> tuple[Array, Array]:
    b = (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0)
    ident = _identity_like(A)
    A2 = _precise_dot(A, A)
    A4 = _precise_dot(A2, A2)
    U = _precise_dot(A, b[5] * A4 + b[3] * A2 + b[1] * ident)
    V = b[4] * A4 + b[2] * A2 + b[0] * ident
    return U, V


def _pade7(A: Array) -> tuple[Array, Array]:
    b = (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0)
    ident = _identity_like(A)
    A2 = _precise_dot(A, A)
    A4 = _precise_dot(A2, A2)
    A6 = _precise_dot(A4, A2)
    U = _precise_dot(A, b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * ident)
    V = b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * ident
    return U, V


def _pade9(A: Array) -> tuple[Array, Array]:
    b = (
        17643225600.0,
        8821612800.0,
        2075673600.0,
        302702400.0,
        30270240.0,
        2162160.0,
        110880.0,
        3960.0,
        90.0,
        1.0,
    )
    ident = _identity_like(A)
    A2 = _precise_dot(A, A)
    A4 = _precise_dot(A2, A2)
    A6 = _precise_dot(A4, A2)
    A8 = _precise_dot(A6, A2)
    U = _precise_dot(A, b[9] * A8 + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * ident)
    V = b[8] * A8 + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * ident
    return U, V


def _pade13(A: Array) -> tuple[Array, Array]:
    b = (
        64764752532480000.0,
        32382376266240000.0,
        7771770303897600.0,
        1187353796428800.0,
        129060195264000.0,
        10559470521600.0,
        670442572800.0,
        33522128640.0,
        1323241920.0,
        40840800.0,
        960960.0,
        16380.0,
        182.0,
        1.0,
    )
    ident = _identity_like(A)
    A2 = _precise_dot(A, A)
    A4 = _precise_dot(A2, A2)
    A6 = _precise_dot(A4, A2)
    inner_u = _precise_dot(A6, b[13] * A6 + b[11] * A4 + b[9] * A2)
    U = _precise_dot(A, inner_u + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * ident)
    inner_v = _precise_dot(A6, b[12] * A6 + b[10] * A4 + b[8] * A2)
    V = inner_v + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * ident
    return U, V


@partial(Jitted, static_argnames=("method", "compute_expm"))
def expm_frechet(
    A: Any, E: Any, *, method: str | None = None, compute_expm: bool = True
) -> Array | tuple[Array, Array]:
    """The Frechet derivative of `expm` at `A` in the direction `E` (the jvp of `expm`), with
    `expm(A)` first unless `compute_expm` is False. `method` is ignored, as in JAX.

    Raises:
        ValueError: if `A` or `E` is not a (batched) square matrix, or their shapes differ.
    """
    del method
    A_arr = jnp.asarray(A)
    E_arr = jnp.asarray(E)
    a_shape, e_shape = shape_of(A_arr), shape_of(E_arr)
    # JAX compares the second-to-last dimension with dimension 1 (not -1); kept for parity.
    if len(a_shape) < 2 or a_shape[-2] != a_shape[1]:
        raise ValueError(f"expected A to be a (batched) square matrix, got A.shape={a_shape}")
    if len(e_shape) < 2 or e_shape[-2] != e_shape[-1]:
        raise ValueError(f"expected E to be a (batched) square matrix, got E.shape={e_shape}")
    if a_shape != e_shape:
        raise ValueError(
            f"expected A and E to be the same shape, got A.shape={a_shape} E.shape={e_shape}"
        )
    bound = partial(expm, upper_triangular=False, max_squarings=16)
    expm_A, expm_frechet_AE = jvp(bound, (A_arr,), (E_arr,))
    if compute_expm:
        return expm_A, expm_frechet_AE
    out: Array = expm_frechet_AE
    return out
