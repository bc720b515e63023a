"""`cholesky`, `det` and `slogdet` of `lamina.numpy.linalg`, built on the `lax.linalg`
factorizations as JAX 0.10.2 builds them, so their jaxprs print alike.

`det` uses closed forms for 2x2 and 3x3 matrices and otherwise `exp(slogdet)`, with JAX's
derivative through a cofactor solve that stays finite for matrices of rank n-1. `slogdet` uses
closed forms for 1x1 and 2x2 matrices and otherwise the LU factorization: the sign from the
pivots' parity and the diagonal, the log magnitude from the diagonal; its derivative (n > 2)
is JAX's `trace(solve(a, da))`.
"""

from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

import numpy as np

import lamina_core.numpy as jnp
from lamina_core import lax
from lamina_core.custom_derivatives import custom_jvp
from lamina_core.lax import linalg as lax_linalg
from lamina_core.numpy._linalg_solve import solve
from lamina_core.numpy._promote import promote_dtypes_inexact
from lamina_core.numpy._reductions import ensure_arraylike
from lamina_core.numpy._util import Array
from lamina_core.transforms import Jitted


class SlogdetResult(NamedTuple):
    """`slogdet`'s result: the sign (or phase) of the determinant and the log of its
    magnitude."""

    sign: Array
    logabsdet: Array


@partial(Jitted, static_argnames=("upper", "symmetrize_input"))
def cholesky(a: Any, *, upper: bool = False, symmetrize_input: bool = True) -> Array:
    """The Cholesky factor of each Hermitian positive definite matrix in `a` (`..., n, n`):
    lower `L` with `a = L @ L^H`, or upper `U = L^H` with `upper`; NaN where it fails."""
    (a,) = ensure_arraylike("jnp.linalg.cholesky", a)
    (a,) = promote_dtypes_inexact(a)
    factor = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    if not upper:
        return factor
    return jnp.conjugate(jnp.matrix_transpose(factor))


# --- slogdet ----------------------------------------------------------------------------------


def _slogdet_closed_form(a: Array) -> tuple[Array, Array]:
    if a.shape[-1] == 1:
        det = a[..., 0, 0]
    else:
        a00, a01 = a[..., 0, 0], a[..., 0, 1]
        a10, a11 = a[..., 1, 0], a[..., 1, 1]
        det = (a00 * a11) - (a01 * a10)
    abs_det = jnp.abs(det)
    return jnp.sign(det), jnp.real(jnp.log(abs_det))


@custom_jvp
def _slogdet_small(a: Array) -> tuple[Array, Array]:
    n = a.shape[-1]
    if n not in (1, 2):
        raise ValueError(f"_slogdet_small only supports n in {{1, 2}}, got n={n}")
    return _slogdet_closed_form(a)


def _sign_and_log_tangents(x: Array, sign: Array, ans_dot: Array) -> tuple[Array, Array]:
    """The tangents of (sign, log|det|) from d log det: for complex matrices the imaginary
    part turns the phase, for real ones the sign is constant."""
    if jnp.issubdtype(x.dtype, np.complexfloating):
        sign_dot = (ans_dot - jnp.real(ans_dot).astype(ans_dot.dtype)) * sign
        return sign_dot, jnp.real(ans_dot)
    return jnp.zeros_like(sign), ans_dot


def _slogdet_small_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (g,) = primals, tangents
    sign, ans = _slogdet_small(x)
    if x.shape[-1] == 1:
        ans_dot = g[..., 0, 0] / x[..., 0, 0]
    else:
        x00, x01 = x[..., 0, 0], x[..., 0, 1]
        x10, x11 = x[..., 1, 0], x[..., 1, 1]
        det = (x00 * x11) - (x01 * x10)
        ans_dot = (
            g[..., 0, 0] * x11 - g[..., 0, 1] * x10 - g[..., 1, 0] * x01 + g[..., 1, 1] * x00
        ) / det
    sign_dot, ans_dot = _sign_and_log_tangents(x, sign, ans_dot)
    return (sign, ans), (sign_dot, ans_dot)


_slogdet_small.defjvp(_slogdet_small_jvp)


@custom_jvp
def _slogdet_lu(a: Array) -> tuple[Array, Array]:
    dtype = a.dtype
    lu, pivot, _ = lax_linalg.lu(a)
    diag = jnp.diagonal(lu, axis1=-2, axis2=-1)
    is_zero = jnp.any(diag == jnp.array(0, dtype=dtype), axis=-1)
    iota = lax.expand_dims(jnp.arange(a.shape[-1], dtype=pivot.dtype), range(pivot.ndim - 1))
    parity = jnp.count_nonzero(pivot != iota, axis=-1)
    if jnp.iscomplexobj(a):
        sign = jnp.prod(diag / jnp.abs(diag).astype(diag.dtype), axis=-1)
    else:
        sign = jnp.array(1, dtype=dtype)
        parity = parity + jnp.count_nonzero(diag < 0, axis=-1)
    sign = jnp.where(
        is_zero,
        jnp.array(0, dtype=dtype),
        sign * jnp.array(-2 * (parity % 2) + 1, dtype=dtype),
    )
    logdet = jnp.where(
        is_zero,
        jnp.array(-np.inf, dtype=dtype),
        jnp.sum(jnp.log(jnp.abs(diag)).astype(dtype), axis=-1),
    )
    return sign, jnp.real(logdet)


def _slogdet_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (g,) = primals, tangents
    sign, ans = slogdet(x)
    ans_dot = jnp.trace(solve(x, g), axis1=-1, axis2=-2)
    sign_dot, ans_dot = _sign_and_log_tangents(x, sign, ans_dot)
    return (sign, ans), (sign_dot, ans_dot)


_slogdet_lu.defjvp(_slogdet_jvp)


@partial(Jitted, static_argnames=("method",))
def slogdet(a: Any, *, method: str | None = None) -> SlogdetResult:
    """The sign (or phase) and log magnitude of the determinant of each matrix in `a`
    (`..., n, n`). `method` may only be `'lu'` (the default, None); QR is not there yet."""
    (a,) = ensure_arraylike("jnp.linalg.slogdet", a)
    (a,) = promote_dtypes_inexact(a)
    shape = np.shape(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"Argument to slogdet() must have shape [..., n, n], got {shape}")
    if method is None or method == "lu":
        if shape[-1] in (1, 2):
            return SlogdetResult(*_slogdet_small(a))
        return SlogdetResult(*_slogdet_lu(a))
    if method == "qr":
        raise NotImplementedError("slogdet method='qr' needs linalg.geqrf, which Lamina lacks")
    raise ValueError(
        f"Unknown slogdet method '{method}'. Supported methods are 'lu' (`None`), and 'qr'."
    )


# --- det --------------------------------------------------------------------------------------


def _cofactor_solve(a: Array, b: Array) -> tuple[Array, Array]:
    """`(det(a), det(a) * solve(a, b))`, kept finite for `a` of rank n-1 by working from the
    LU factors with the last pivot left out; zero where the rank is lower."""
    a_shape, b_shape = np.shape(a), np.shape(b)
    if not (len(a_shape) >= 2 and a_shape[-1] == a_shape[-2] and b_shape[-2:] == a_shape[-2:]):
        raise ValueError(
            "The arguments to _cofactor_solve must have shapes a=[..., m, m] and "
            f"b=[..., m, m]; got a={a_shape} and b={b_shape}"
        )
    if a_shape[-1] == 1:
        return a[..., 0, 0], b
    lu, pivots, permutation = lax_linalg.lu(a)
    dtype = a.dtype
    batch_dims = lax.broadcast_shapes(lu.shape[:-2], b.shape[:-2])
    x = jnp.broadcast_to(b, batch_dims + b.shape[-2:])
    lu = jnp.broadcast_to(lu, batch_dims + lu.shape[-2:])
    diag = jnp.diagonal(lu, axis1=-2, axis2=-1)
    iota = lax.expand_dims(jnp.arange(a_shape[-1], dtype=pivots.dtype), range(pivots.ndim - 1))
    parity = jnp.count_nonzero(pivots != iota, axis=-1)
    sign = jnp.asarray(-2 * (parity % 2) + 1, dtype=dtype)
    # The last column is the determinant; the one before leaves out u_nn.
    partial_det = jnp.cumprod(diag, axis=-1) * sign[..., None]
    lu = lu.at[..., -1, -1].set(1.0 / partial_det[..., -2])
    permutation = jnp.broadcast_to(permutation, (*batch_dims, a_shape[-1]))
    iotas = jnp.ix_(*(lax.iota(np.int32, d) for d in (*batch_dims, 1)))
    # Matrices of rank below n-1 give zero.
    d = jnp.ones(x.shape[:-1], x.dtype)
    d = lax_linalg.triangular_solve(lu, d, left_side=True, lower=False)
    d = jnp.any(jnp.logical_or(jnp.isnan(d), jnp.isinf(d)), axis=-1)
    d = jnp.tile(d[..., None, None], d.ndim * (1,) + x.shape[-2:])
    x = jnp.where(d, jnp.zeros_like(x), x)
    x = x[(*iotas[:-1], permutation, slice(None))]
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
    x = jnp.concatenate(
        (x[..., :-1, :] * partial_det[..., -1, None, None], x[..., -1:, :]), axis=-2
    )
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=False)
    x = jnp.where(d, jnp.zeros_like(x), x)
    return partial_det[..., -1], x


def _det_2x2(a: Array) -> Array:
    return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]


def _det_3x3(a: Array) -> Array:
    return (
        a[..., 0, 0] * a[..., 1, 1] * a[..., 2, 2]
        + a[..., 0, 1] * a[..., 1, 2] * a[..., 2, 0]
        + a[..., 0, 2] * a[..., 1, 0] * a[..., 2, 1]
        - a[..., 0, 2] * a[..., 1, 1] * a[..., 2, 0]
        - a[..., 0, 0] * a[..., 1, 2] * a[..., 2, 1]
        - a[..., 0, 1] * a[..., 1, 0] * a[..., 2, 2]
    )


@custom_jvp
def _det(a: Array) -> Array:
    sign, logdet = slogdet(a)
    return sign * jnp.exp(logdet).astype(sign.dtype)


def _det_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (g,) = primals, tangents
    y, z = _cofactor_solve(x, g)
    return y, jnp.trace(z, axis1=-1, axis2=-2)


_det.defjvp(_det_jvp)


@Jitted
def det(a: Any) -> Array:
    """The determinant of each matrix in `a` (`..., n, n`)."""
    (a,) = ensure_arraylike("jnp.linalg.det", a)
    (a,) = promote_dtypes_inexact(a)
    shape = np.shape(a)
    if len(shape) >= 2 and shape[-1] == 2 and shape[-2] == 2:
        return _det_2x2(a)
    if len(shape) >= 2 and shape[-1] == 3 and shape[-2] == 3:
        return _det_3x3(a)
    if len(shape) >= 2 and shape[-1] == shape[-2]:
        return _det(a)
    raise ValueError(f"Argument to _det() must have shape [..., n, n], got {shape}")


__all__ = ["SlogdetResult", "cholesky", "det", "slogdet"]
