"""The singular-value functions of `lamina.numpy.linalg`, built on `lax.linalg.svd` (and
`eigh` for Hermitian input) as JAX 0.10.2 builds them, jitted as JAX's are so their jaxprs
print alike: `svd`, `svdvals`, `matrix_rank`, `pinv` (with JAX's Golub-Pereyra derivative as a
custom jvp), `cond` (other orders than None and ±2 through `inv`) and the singular-value
matrix norms `norm` uses."""

from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

import numpy as np

import lamina_core.numpy as jnp
from lamina_core import lax
from lamina_core.custom_derivatives import custom_jvp
from lamina_core.ir import dtypes
from lamina_core.lax import _H, _symmetrize
from lamina_core.lax import linalg as lax_linalg
from lamina_core.numpy._promote import promote_dtypes_inexact
from lamina_core.numpy._reductions import ensure_arraylike
from lamina_core.numpy._util import Array
from lamina_core.transforms import Jitted


class SVDResult(NamedTuple):
    """`svd`'s result: `U`, the descending singular values `S`, and `Vh`."""

    U: Array
    S: Array
    Vh: Array


def _hermitian_svd(a: Array, compute_uv: bool, subset_by_index: Any) -> Any:
    """The SVD of a Hermitian matrix from its eigendecomposition: |eigenvalues|, sorted
    descending, with the eigenvalues' signs moved into `Vh`."""
    vectors, values = lax_linalg.eigh(a, subset_by_index=subset_by_index)
    s = lax.abs(values)
    last = s.ndim - 1
    if not compute_uv:
        return lax.rev(lax.sort(s, dimension=-1), dimensions=[last])
    sign = lax.sign(values)
    idxs = lax.broadcasted_iota(np.dtype(np.uint32), s.shape, dimension=last)
    s, idxs, sign = lax.sort((s, idxs, sign), dimension=-1, num_keys=1)
    s = lax.rev(s, dimensions=[last])
    idxs = lax.rev(idxs, dimensions=[last])
    sign = lax.rev(sign, dimensions=[last])
    u = jnp.take_along_axis(vectors, idxs[..., None, :], axis=-1)
    vh = _H(u * sign[..., None, :].astype(u.dtype))
    return SVDResult(u, s, vh)


@partial(Jitted, static_argnames=("full_matrices", "compute_uv", "hermitian", "subset_by_index"))
def svd(
    a: Any,
    full_matrices: bool = True,
    compute_uv: bool = True,
    hermitian: bool = False,
    subset_by_index: tuple[int, int] | None = None,
) -> Any:
    """The singular value decomposition of each matrix in `a` (`..., M, N`):
    `SVDResult(U, S, Vh)` with `compute_uv`, else the singular values `S` (descending)."""
    (a,) = ensure_arraylike("jnp.linalg.svd", a)
    (a,) = promote_dtypes_inexact(a)
    if hermitian:
        return _hermitian_svd(a, compute_uv, subset_by_index)
    if compute_uv:
        u, s, vh = lax_linalg.svd(
            a, full_matrices=full_matrices, compute_uv=True, subset_by_index=subset_by_index
        )
        return SVDResult(u, s, vh)
    return lax_linalg.svd(
        a, full_matrices=full_matrices, compute_uv=False, subset_by_index=subset_by_index
    )


def svdvals(x: Any, /) -> Array:
    """The singular values of each matrix in `x` (`..., M, N`), descending."""
    (x,) = ensure_arraylike("jnp.linalg.svdvals", x)
    out: Array = svd(x, compute_uv=False, hermitian=False)
    return out


@partial(Jitted, static_argnames=("hermitian",))
def matrix_rank(M: Any, rtol: Any = None, *, hermitian: bool = False, tol: Any = None) -> Array:
    """The number of singular values of each matrix in `M` above `rtol` times the largest
    (by default `max(M, N) * eps` times it)."""
    (M,) = ensure_arraylike("jnp.linalg.matrix_rank", M)
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
        rtol = tol
    (M,) = promote_dtypes_inexact(M)
    if M.ndim < 2:
        return (M != 0).any().astype(np.int32)
    s = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    if rtol is None:
        rtol = s.max(-1) * np.max(M.shape[-2:]).astype(s.dtype) * dtypes.finfo(s.dtype).eps
    rtol = jnp.expand_dims(rtol, np.ndim(rtol))
    out: Array = jnp.sum(s > rtol, axis=-1)
    return out


# --- pinv -------------------------------------------------------------------------------------


@partial(Jitted, static_argnames=("hermitian",))
def _pinv(a: Any, rtol: Any = None, hermitian: bool = False) -> Array:
    (a,) = ensure_arraylike("jnp.linalg.pinv", a)
    (arr,) = promote_dtypes_inexact(a)
    m, n = arr.shape[-2:]
    if m == 0 or n == 0:
        out: Array = jnp.empty((*arr.shape[:-2], n, m), arr.dtype)
        return out
    arr = jnp.conj(arr)
    if rtol is None:
        max_rows_cols = max(arr.shape[-2:])
        # Through jnp, not NumPy, so that the product is staged as JAX's is.
        rtol = jnp.multiply(10.0 * max_rows_cols, jnp.array(dtypes.finfo(arr.dtype).eps))
    rtol = jnp.asarray(rtol)
    u, s, vh = svd(arr, full_matrices=False, hermitian=hermitian)
    # Singular values at most rtol times the largest one count as zero.
    rtol = lax.expand_dims(rtol[..., np.newaxis], range(s.ndim - rtol.ndim - 1))
    cutoff = rtol * s[..., 0:1]
    s = jnp.where(s > cutoff, s, np.inf).astype(u.dtype)
    vh_t, u_t = jnp.matrix_transpose(vh), jnp.matrix_transpose(u)
    res = jnp.matmul(vh_t, jnp.divide(u_t, s[..., np.newaxis]), precision=lax.Precision.HIGHEST)
    converted: Array = lax.convert_element_type(res, arr.dtype)
    return converted


# The jitted function itself carries the custom rule (its name prints in the jaxpr).
_pinv_with_jvp = custom_jvp(_pinv, nondiff_argnums=(1, 2))


def _pinv_jvp(
    rtol: Any, hermitian: bool, primals: tuple[Any, ...], tangents: tuple[Any, ...]
) -> tuple[Any, Any]:
    # Golub and Pereyra's derivative of the pseudo-inverse (SIAM J. Numer. Anal. 10(2), 1973).
    (a,), (a_dot,) = primals, tangents
    p = pinv(a, rtol=rtol, hermitian=hermitian)
    if hermitian:
        a, a_dot = _symmetrize(a), _symmetrize(a_dot)

    def mm(x: Any, y: Any) -> Any:
        # JAX computes this rule under `default_matmul_precision("float32")`.
        return jnp.matmul(x, y, precision=lax.Precision.HIGHEST)

    m, n = a.shape[-2:]
    if m >= n:
        s = mm(mm(p, _H(p)), _H(a_dot))
        t = mm(mm(_H(a_dot), _H(p)), p)
        p_dot = mm(-mm(p, a_dot), p) + s - mm(mm(s, a), p) + t - mm(mm(p, a), t)
    else:
        s = mm(p, mm(_H(p), _H(a_dot)))
        t = mm(_H(a_dot), mm(_H(p), p))
        p_dot = mm(-p, mm(a_dot, p)) + s - mm(s, mm(a, p)) + t - mm(p, mm(a, t))
    return p, p_dot


_pinv_with_jvp.defjvp(_pinv_jvp)


def pinv(a: Any, rtol: Any = None, hermitian: bool = False, *, rcond: Any = None) -> Array:
    """The Moore-Penrose pseudo-inverse of each matrix in `a` (`..., M, N`), from its SVD with
    singular values at most `rtol` times the largest treated as zero."""
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified.")
        rtol = rcond
    out: Array = _pinv_with_jvp(a, rtol, hermitian)
    return out


# --- cond and the singular-value norms ---------------------------------------------------------


@partial(Jitted, static_argnames=("p",))
def cond(x: Any, p: Any = None) -> Array:
    """The condition number of each matrix in `x` (`..., M, N`): the ratio of the largest to
    the smallest singular value (`p` None or 2), or its inverse (`p=-2`); for other `p`, the
    product of the `p`-norms of `x` and its inverse (square `x`)."""
    (arr,) = ensure_arraylike("cond", x)
    if arr.ndim < 2:
        raise ValueError(f"jnp.linalg.cond: input array must be at least 2D; got {arr.shape=}")
    if arr.shape[-1] == 0 or arr.shape[-2] == 0:
        raise ValueError(f"jnp.linalg.cond: input array must not be empty; got {arr.shape=}")
    if p is None or p == 2:
        s = svdvals(x)
        out: Array = s[..., 0] / s[..., -1]
        return out
    if p == -2:
        s = svdvals(x)
        r = s[..., -1] / s[..., 0]
    else:
        if arr.shape[-2] != arr.shape[-1]:
            raise ValueError(
                f"jnp.linalg.cond: for p={p!r}, array must be square; got arr.shape={arr.shape}"
            )
        norm = jnp.linalg.norm
        r = norm(x, ord=p, axis=(-2, -1)) * norm(jnp.linalg.inv(x), ord=p, axis=(-2, -1))
    # NaN becomes inf, unless the input itself has NaNs.
    r_is_nan = jnp.isnan(r)
    result: Array = jnp.where(r_is_nan & ~jnp.isnan(x).any(axis=(-2, -1)), np.inf, r)
    return result


def singular_value_norm(x: Array, ord: Any, axes: tuple[int, int], keepdims: bool) -> Array:
    """The matrix norms `nuc` (sum), 2 (largest) and -2 (smallest) of the singular values of
    `x` over `axes`."""
    x = jnp.moveaxis(x, axes, (-2, -1))
    s = svd(x, compute_uv=False)
    if ord == 2:
        y = jnp.max(s, axis=-1, initial=0)
    elif ord == -2:
        y = jnp.min(s, axis=-1)
    else:
        y = jnp.sum(s, axis=-1)
    if keepdims:
        y = jnp.expand_dims(y, axes)
    out: Array = y
    return out


__all__ = ["SVDResult", "cond", "matrix_rank", "pinv", "svd", "svdvals"]
