"""The Schur and Hessenberg decompositions of `jax.scipy.linalg` (`schur`, `hessenberg`), the
conversion of a real Schur form to a complex one (`rsf2csf`, Givens rotations), a matrix
function through the complex Schur form (`funm`, the Schur-Parlett recurrence), and the
matrix square root built on the complex Schur form (`sqrtm`, Bjorck and Hammarling's
recurrence), over `lax.linalg`'s `schur`, `hessenberg` and `householder_product`, staged as
JAX 0.10.2 stages them."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.ir import dtypes
from lamina_core.lax import linalg as lax_linalg
from lamina_core.numpy import at, dtype_of, shape_of
from lamina_core.transforms import Jitted

Array = Any


def _complex_dtype(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """The complex dtype with `dtype`'s real precision (complex dtypes map to themselves)."""
    if dtype.kind == "c":
        return dtype
    return np.dtype(np.complex128 if dtype.itemsize == 8 else np.complex64)


@partial(Jitted, static_argnames=("output",))
def _schur(a: Array, output: str) -> tuple[Array, Array]:
    if output == "complex":
        a = a.astype(_complex_dtype(dtype_of(a)))
    out: tuple[Array, Array] = lax_linalg.schur(a)
    return out


def schur(a: Any, output: str = "real") -> tuple[Array, Array]:
    """(t, z) with a = z t z^H and z unitary: t quasi-upper-triangular (`output='real'`, 2x2
    blocks for complex pairs) or upper triangular ('complex')."""
    if output not in ("real", "complex"):
        raise ValueError(
            f"Expected 'output' to be either 'real' or 'complex', got output={output!r}."
        )
    out: tuple[Array, Array] = _schur(a, output)
    return out


@partial(Jitted, static_argnames=("calc_q", "check_finite", "overwrite_a"))
def hessenberg(
    a: Any, *, calc_q: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> Array | tuple[Array, Array]:
    """The upper Hessenberg form h of `a` (a = q h q^H), and with `calc_q` also the unitary q."""
    del overwrite_a, check_finite
    n = np.shape(a)[-1]
    if n == 0:
        if calc_q:
            return jnp.zeros_like(a), jnp.zeros_like(a)
        return jnp.zeros_like(a)
    a_out, taus = lax_linalg.hessenberg(a)
    h = jnp.triu(a_out, -1)
    if not calc_q:
        return h
    q = lax_linalg.householder_product(a_out[..., 1:, :-1], taus)
    batch = shape_of(a_out)[:-2]
    dtype = dtype_of(a_out)
    q = jnp.block(
        [
            [jnp.ones((*batch, 1, 1), dtype=dtype), jnp.zeros((*batch, 1, n - 1), dtype=dtype)],
            [jnp.zeros((*batch, n - 1, 1), dtype=dtype), q],
        ]
    )
    return h, q


@Jitted
def _sqrtm_triu(T: Array) -> Array:
    """The upper-triangular square root of the upper-triangular `T`, column by column, each
    column from the diagonal up (Bjorck and Hammarling 1983)."""
    diag = jnp.sqrt(jnp.diag(T))
    n = shape_of(diag)[0]
    U = jnp.diag(diag)

    def up_column(offset: Array, data: tuple[Array, Array]) -> tuple[Array, Array]:
        j, U = data
        i = j - 1 - offset
        s = lax.fori_loop(i + 1, j, lambda k, acc: acc + U[i, k] * U[k, j], 0.0)
        value = jnp.where(T[i, j] == s, 0.0, (T[i, j] - s) / (diag[i] + diag[j]))
        return j, at(U)[i, j].set(value)

    def column(j: Array, U: Array) -> Array:
        _, U = lax.fori_loop(0, j, up_column, (j, U))
        return U

    out: Array = lax.fori_loop(0, n, column, U)
    return out


@Jitted
def _sqrtm(A: Any) -> Array:
    T, Z = schur(A, output="complex")
    sqrt_T = _sqrtm_triu(T)
    highest = lax.Precision.HIGHEST
    return jnp.matmul(
        jnp.matmul(Z, sqrt_T, precision=highest), jnp.conj(jnp.transpose(Z)), precision=highest
    )


def sqrtm(A: Any, blocksize: int = 1) -> Array:
    """A (complex) matrix square root of `A`, from its complex Schur form; only
    `blocksize=1` (no blocking) is implemented, as in JAX."""
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    return _sqrtm(A)


def _promote_complex(*args: Array) -> list[Array]:
    """The arguments converted to one complex dtype (JAX's `promote_dtypes_complex`)."""
    dtype = _complex_dtype(dtypes.result_type(*args))
    return [x if dtype_of(x) == dtype else lax.convert_element_type(x, dtype) for x in args]


@Jitted
def _rsf2csf_2d(T: Array, Z: Array) -> tuple[Array, Array]:
    T, Z = _promote_complex(T, Z)
    eps = dtypes.finfo(dtype_of(T)).eps
    N = shape_of(T)[0]
    if N == 1:
        return T, Z

    def rotate(m: Array, T: Array, Z: Array) -> tuple[Array, Array]:
        # A Givens rotation zeroing T[m, m-1], from an eigenvalue of the 2x2 block at m-1.
        mu = jnp.linalg.eigvals(lax.dynamic_slice(T, (m - 1, m - 1), (2, 2))) - T[m, m]
        r = jnp.linalg.norm(jnp.array([mu[0], T[m, m - 1]])).astype(dtype_of(T))
        c = mu[0] / r
        s = T[m, m - 1] / r
        G = jnp.array([[jnp.conj(c), s], [jnp.negative(s), c]], dtype=dtype_of(T))

        rows = lax.dynamic_slice_in_dim(T, m - 1, 2, axis=0)
        col_mask = jnp.arange(N) >= m - 1
        rotated_rows = jnp.matmul(G, jnp.where(col_mask, rows, 0))
        T = lax.dynamic_update_slice_in_dim(
            T, jnp.where(jnp.invert(col_mask), rows, rotated_rows), m - 1, axis=0
        )
        cols = lax.dynamic_slice_in_dim(T, m - 1, 2, axis=1)
        row_mask = jnp.arange(N)[:, np.newaxis] < m + 1
        rotated_cols = jnp.matmul(jnp.where(row_mask, cols, 0), jnp.transpose(jnp.conj(G)))
        T = lax.dynamic_update_slice_in_dim(
            T, jnp.where(jnp.invert(row_mask), cols, rotated_cols), m - 1, axis=1
        )
        z_cols = lax.dynamic_slice_in_dim(Z, m - 1, 2, axis=1)
        Z = lax.dynamic_update_slice_in_dim(
            Z, jnp.matmul(z_cols, jnp.transpose(jnp.conj(G))), m - 1, axis=1
        )
        return T, Z

    def step(i: Array, TZ: tuple[Array, Array]) -> tuple[Array, Array]:
        m = N - i
        T, Z = TZ
        big = jnp.abs(T[m, m - 1]) > eps * (jnp.abs(T[m - 1, m - 1]) + jnp.abs(T[m, m]))
        T, Z = lax.cond(big, rotate, lambda m, T, Z: (T, Z), m, T, Z)
        T = at(T)[m, m - 1].set(0.0)
        return T, Z

    out: tuple[Array, Array] = lax.fori_loop(1, N, step, (T, Z))
    return out


@partial(Jitted, static_argnames=("check_finite",))
def rsf2csf(T: Any, Z: Any, check_finite: bool = True) -> tuple[Array, Array]:
    """The complex Schur form (t, z) of a real Schur form `T` with Schur vectors `Z` (as
    `schur(a)` returns them): t upper triangular, a = z t z^H still."""
    del check_finite
    T_arr = jnp.asarray(T)
    Z_arr = jnp.asarray(Z)
    t_shape, z_shape = shape_of(T_arr), shape_of(Z_arr)
    if len(t_shape) < 2 or t_shape[-1] != t_shape[-2]:
        raise ValueError("Input 'T' must be square.")
    if len(z_shape) < 2 or z_shape[-1] != z_shape[-2]:
        raise ValueError("Input 'Z' must be square.")
    if t_shape[-1] != z_shape[-1]:
        raise ValueError(f"Input array shapes must match: Z: {z_shape} vs. T: {t_shape}")
    out: tuple[Array, Array] = jnp.vectorize(_rsf2csf_2d, signature="(n,n),(n,n)->(n,n),(n,n)")(
        T_arr, Z_arr
    )
    return out


@Jitted
def _parlett(F: Array, T: Array) -> tuple[Array, Array]:
    """Parlett's recurrence (Golub and Van Loan, algorithm 11.1.1): the strictly upper part
    of f(T) from its diagonal, superdiagonal by superdiagonal; also the smallest |T_jj - T_ii|
    met, which bounds the error."""
    N = shape_of(T)[0]
    minden = jnp.abs(T[0, 0])

    def superdiagonal(p: Array, F_minden: tuple[Array, Array]) -> tuple[Array, Array]:
        _, F, minden = lax.fori_loop(1, N - p + 1, entry, (p, *F_minden))
        return F, minden

    def entry(i: Array, p_F_minden: tuple[Array, Array, Array]) -> tuple[Array, Array, Array]:
        p, F, minden = p_F_minden
        j = i + p
        s = T[i - 1, j - 1] * (F[j - 1, j - 1] - F[i - 1, i - 1])
        between = (jnp.arange(N) >= i) & (jnp.arange(N) < j - 1)
        val = jnp.matmul(
            jnp.where(between, T[i - 1], 0), jnp.where(between, F[:, j - 1], 0)
        ) - jnp.matmul(jnp.where(between, F[i - 1], 0), jnp.where(between, T[:, j - 1], 0))
        s = s + val
        den = T[j - 1, j - 1] - T[i - 1, i - 1]
        s = jnp.where(den != 0, s / den, s)
        F = at(F)[i - 1, j - 1].set(s)
        minden = jnp.minimum(minden, jnp.abs(den))
        return p, F, minden

    out: tuple[Array, Array] = lax.fori_loop(1, N, superdiagonal, (F, minden))
    return out


def funm(A: Any, func: Callable[[Array], Array], disp: bool = True) -> Array | tuple[Array, Array]:
    """The matrix function f(A) for the scalar function `func` (applied to the eigenvalues on
    the complex Schur form's diagonal), complex-valued; with `disp=False` also an estimate of
    its relative error.

    Raises:
        ValueError: if `A` is not a square matrix.
    """
    A_arr = jnp.asarray(A)
    shape = shape_of(A_arr)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError("expected square array_like input")
    T, Z = schur(A_arr)
    T, Z = rsf2csf(T, Z)
    F = jnp.diag(func(jnp.diag(T)))
    F = F.astype(dtype_of(T).char)
    F, minden = _parlett(F, T)
    F = jnp.matmul(jnp.matmul(Z, F), jnp.transpose(jnp.conj(Z)))
    if disp:
        return F
    char = dtype_of(F).char.lower()
    tol = dtypes.finfo(np.float32 if char == "f" else np.float64).eps
    minden = jnp.where(minden == 0.0, tol, minden)
    bound = jnp.minimum(1, jnp.maximum(tol, (tol / minden) * jnp.linalg.norm(jnp.triu(T, 1), 1)))
    err = jnp.where(jnp.any(jnp.isinf(F)), np.inf, bound)
    return F, err
