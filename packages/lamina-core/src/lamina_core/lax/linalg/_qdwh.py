"""`qdwh`: the polar decomposition `x = u h` by the QR-based dynamically weighted Halley
iteration (Nakatsukasa, Bai and Gygi, SIAM J. Matrix Anal. Appl. 31(5), 2010), as JAX 0.10.2
computes it, on Lamina's operations.

The iteration's weights follow from the lower bound `l` of the scaled matrix's smallest
singular value, starting from `eps`, and are computed ahead (in Python) until `l` reaches 1:
steps with a large weight `c` use a QR factorization of `[sqrt(c) u; I]`, the others a Cholesky
factorization of `c u^H u + I`. Cholesky steps with the limit weights `(3, 1, 3)` continue
until the iterate moves by less than `cbrt(5 eps)` or `max_iterations` is reached. A final
Newton-Schulz step polishes `u`, and `h = sym(u^H x)`. A matrix padded from a smaller true
shape (`dynamic_shape`) is masked to it first.

JAX writes it with `jax.numpy`; the `jnp` functions it calls (`eye`, `where`, `linalg.norm`,
`cbrt`, `logical_and`, ...) are staged here as `lamina_core.numpy` stages them (`where` and
`norm` as `jit`s of those names), on lax's operations: numpy sits above lax.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from lamina_core.ir import dtypes
from lamina_core.lax import _elementwise as ew
from lamina_core.lax import _slicing
from lamina_core.lax._array_helpers import dtype_of, promote_dtypes, promote_dtypes_inexact, where
from lamina_core.lax._joining import concatenate, pad
from lamina_core.lax._reductions import reduce_max, reduce_sum
from lamina_core.lax._shape import broadcasted_iota
from lamina_core.lax._structural import _convert_element_type, convert_element_type
from lamina_core.lax._transcendental import cbrt, rsqrt, sqrt
from lamina_core.lax._types import Array
from lamina_core.lax.control_flow.loops import fori_loop, while_loop
from lamina_core.lax.linalg._primitives import cholesky, triangular_solve
from lamina_core.lax.linalg._qr import qr
from lamina_core.transforms import Jitted

_CHOLESKY_CUTOFF = 100


def _eye(n: int, dtype: np.dtype) -> Any:
    """`jnp.eye(n, dtype=dtype)`: the iotas' equality, converted."""
    offset = dtypes.dtype(0, canonicalize=True)
    rows = broadcasted_iota(offset, (n, n), 0)
    cols = broadcasted_iota(offset, (n, n), 1)
    return convert_element_type(ew.eq(ew.add(rows, np.array(0, offset)), cols), dtype)


def _norm_body(x: Any, ord: Any) -> Any:
    # `jnp.linalg.norm(x, ord)` of a matrix of an inexact dtype: Frobenius (`ord=None`), the
    # largest column sum (1) or row sum (inf) of magnitudes, at least 0.
    if ord is None:
        if dtype_of(x).kind != "c":
            return sqrt(_sum(ew.mul(x, x), (0, 1)))
        return sqrt(_sum(ew.real(ew.mul(x, ew.conj(x))), (0, 1)))
    sums = _sum(ew.abs(x), (0,) if ord == 1 else (1,))
    return ew.max(np.array(0, dtype_of(sums)), reduce_max(sums, (0,)))


def _sum(x: Any, axes: tuple[int, ...]) -> Any:
    # `jnp.sum`: half-precision floats are summed in float32.
    dtype = dtype_of(x)
    wide = np.dtype(np.float32) if dtype in (dtypes.float16, dtypes.bfloat16) else dtype
    return convert_element_type(reduce_sum(convert_element_type(x, wide), axes), dtype)


_norm_body.__name__ = _norm_body.__qualname__ = "norm"
_norm = Jitted(_norm_body, static_argnames=("ord",))


def _mask(x: Any, dims: tuple[Any, ...], alternative: Any = 0) -> Any:
    """`x` with the entries beyond `dims` (per dimension; `None` for all) set to `alternative`."""
    mask = None
    for i, d in enumerate(dims):
        if d is not None:
            inside = broadcasted_iota(np.dtype(np.int32), x.shape, i) < d
            mask = inside if mask is None else (mask & inside)
    return x if mask is None else where(mask, x, alternative)


def _dynamic_concat(a: Any, b: Any, m: Any) -> Any:
    """`a` (true row count `m`, padded) stacked on `b`."""
    if m is None:
        return concatenate(promote_dtypes(a, b), 0)
    pads = [(0, 0, 0)] * a.ndim
    pads[0] = (0, b.shape[0], 0)
    padded = pad(a, _convert_element_type(0, a.dtype, False), pads)
    return _slicing.dynamic_update_slice_in_dim(padded, b, m, 0)


def _use_qr(u: Any, m: Any, n: Any, params: Any) -> Any:
    a_minus_e_by_sqrt_c, sqrt_c, e = params
    rows, cols = u.shape
    y = _dynamic_concat(sqrt_c * u, _eye(cols, u.dtype), m)
    q, _ = qr(y, full_matrices=False)
    q1 = _mask(_slicing.slice(q, (0, 0), (rows, cols)), (m, n))
    q2 = _slicing.dynamic_slice_in_dim(q, m, cols, axis=0)
    q2 = _mask(q2, (n, n)).T.conj()
    return e * u + a_minus_e_by_sqrt_c * (q1 @ q2)


def _use_cholesky(u: Any, m: Any, n: Any, params: Any) -> Any:
    a_minus_e, c, e = params
    cols = u.shape[1]
    x = c * (u.T.conj() @ u) + _eye(cols, u.dtype)
    x = _mask(x, (n, n), _eye(cols, x.dtype))
    y = cholesky(x, symmetrize_input=False)
    z = triangular_solve(y, u.T, left_side=True, lower=True, conjugate_a=True).conj()
    z = triangular_solve(
        y, z, left_side=True, lower=True, transpose_a=True, conjugate_a=True
    ).T.conj()
    return e * u + a_minus_e * z


def _weights(eps: float, max_iterations: int) -> tuple[list[Any], list[Any]]:
    """The QR steps' and the Cholesky steps' parameters, from the singular value bound."""
    lower = eps
    tol_l = 10.0 * eps / 2.0
    qr_coefs: list[Any] = []
    chol_coefs: list[Any] = []
    k = 0
    while lower + tol_l < 1 and k < max_iterations:
        k += 1
        l2 = lower * lower
        dd = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
        sqd = (1.0 + dd) ** (1 / 2)
        a = sqd + (2 - dd + 2 * (2 - l2) / (l2 * sqd)) ** (1 / 2)
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        lower = lower * (a + b * l2) / (1 + c * l2)
        e = b / c
        if c > _CHOLESKY_CUTOFF:
            qr_coefs.append(((a - e) / c ** (1 / 2), c ** (1 / 2), e))
        else:
            chol_coefs.append((a - e, c, e))
    return qr_coefs, chol_coefs


def _qdwh(x: Any, m: Any, n: Any, max_iterations: int, eps: float | None) -> Any:
    if eps is None:
        eps = float(dtypes.finfo(x.dtype).eps)
    one_norm = _norm(x, ord=1)
    inf_norm = _norm(x, ord=np.inf)
    alpha_inverse = rsqrt(one_norm) * rsqrt(inf_norm)
    alpha_inverse = where(one_norm == 0, 1, alpha_inverse)
    u = x * alpha_inverse.astype(x.dtype)
    tol_norm = cbrt(*promote_dtypes_inexact(10.0 * eps / 2.0))
    qr_coefs, chol_coefs = _weights(eps, max_iterations)

    def iteration(k: Any, state: Any, update_fn: Any, coefs: Any, test: bool) -> Any:
        u, _ = state
        params = (
            (3 - 1 / 3, 3, 1 / 3)
            if coefs is None
            else _slicing.dynamic_index_in_dim(coefs, k, keepdims=False)
        )
        u_prev = u
        u = update_fn(u, m, n, params)
        not_converged: Any = True
        if test:
            not_converged = _norm(u - u_prev, ord=None) > tol_norm
        return u, not_converged

    def iterate(u: Any, coefs: list[Any], update_fn: Any, test: bool) -> Any:
        if not coefs:
            return u, True
        # `jnp.array(coefs)`, a host array of the default float dtype, then in `x`'s.
        default = dtypes.canonicalize_dtype(dtypes.float64)
        table = np.asarray(coefs, default).astype(x.dtype)
        body = partial(iteration, coefs=table, update_fn=update_fn, test=test)
        return fori_loop(0, len(coefs), body, (u, True))

    u, _ = iterate(u, qr_coefs, _use_qr, False)
    u, not_converged = iterate(u, chol_coefs, _use_cholesky, True)

    def cond_fun(state: Any) -> Any:
        k, _, not_converged = state
        # `jnp.logical_and` of two booleans: promoted, then and-ed.
        return ew.bitwise_and(*promote_dtypes(not_converged, k < max_iterations))

    def body_fun(state: Any) -> Any:
        k, u, not_converged = state
        u, not_converged = iteration(k, (u, not_converged), _use_cholesky, None, True)
        return k + 1, u, not_converged

    start = len(qr_coefs) + len(chol_coefs)
    num_iters, u, not_converged = while_loop(cond_fun, body_fun, (start, u, not_converged))
    u = 1.5 * u - 0.5 * u @ (u.T.conj() @ u)
    h = u.T.conj() @ x
    h = (h + h.T.conj()) / 2
    return u, h, num_iters, ew.bitwise_not(not_converged)


@partial(Jitted, static_argnames=("is_hermitian", "max_iterations", "eps"))
def qdwh(
    x: Array,
    *,
    is_hermitian: bool = False,
    max_iterations: int | None = None,
    eps: float | None = None,
    dynamic_shape: tuple[int, int] | None = None,
) -> tuple[Array, Array, Array, Array]:
    """The polar decomposition `x = u h` of a full-rank `M x N` matrix (`M >= N`): the
    isometry `u`, the Hermitian positive semidefinite `h`, the number of iterations and
    whether they converged (to `|x_k - x_k-1| < cbrt(5 eps)`) within `max_iterations`
    (default 10). `x` may be padded from the true shape `dynamic_shape`; `is_hermitian` is
    unused, as in JAX."""
    max_iterations = 10 if max_iterations is None else int(max_iterations)
    rows, cols = x.shape
    if rows < cols:
        raise ValueError("The input matrix of shape M x N must have M >= N.")
    if dynamic_shape is not None:
        m, n = dynamic_shape
        x = _mask(x, (m, n))
    else:
        m, n = rows, cols
    u, h, num_iters, converged = _qdwh(x, m, n, max_iterations, eps)
    return u, h, num_iters, converged


__all__ = ["qdwh"]
