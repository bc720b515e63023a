"""`roots` and `polyfit` of `lamina.numpy`, built as JAX 0.10.2 builds them: `roots` takes the
eigenvalues (`linalg.eigvals`, LAPACK's `geev`, CPU only) of the polynomial's companion matrix,
stripping leading zero coefficients when `strip_zeros` (which needs concrete coefficients) or
else returning NaN for the roots they remove; `polyfit` solves the least-squares problem of the
Vandermonde matrix with `linalg.lstsq`, its columns scaled to unit norm first, with optional
weights, the full `lstsq` outputs (`full`) or the coefficients' covariance (`cov`)."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

import lamina_core.numpy as jnp
from lamina_core import lax
from lamina_core.lax import asarray as _lax_asarray
from lamina_core.lax import complex_dtype
from lamina_core.numpy._promote import promote_dtypes_inexact
from lamina_core.numpy._reductions import ensure_arraylike
from lamina_core.numpy._util import Array, dtype_of, shape_of
from lamina_core.trace import ConcretizationTypeError, Tracer
from lamina_core.transforms import Jitted


@Jitted
def _roots_no_zeros(p: Array) -> Array:
    size = int(np.prod(shape_of(p)))
    dtype = dtype_of(p)
    if size < 2:
        return jnp.array([], dtype=complex_dtype(dtype))
    companion = jnp.diag(jnp.ones((size - 2,), dtype), -1)
    companion = companion.at[0, :].set(-p[1:] / p[0])
    out: Array = jnp.linalg.eigvals(companion)
    return out


def _roll_left(p: Array, shift: Array | int) -> Array:
    """`p` (1-D) rotated left by a possibly traced `shift`: a window of `p` twice over."""
    n = shape_of(p)[0]
    start = jnp.remainder(jnp.asarray(shift, np.int32), n)
    doubled = lax.concatenate([p, p], 0)
    return lax.dynamic_slice(doubled, (start,), (n,))


@Jitted
def _roots_with_zeros(p: Array, num_leading_zeros: Array | int) -> Array:
    n = shape_of(p)[0]
    # An all-zero polynomial would make LAPACK fail: solve for ones instead.
    p = jnp.where(n == num_leading_zeros, 1.0, p)
    found = _roots_no_zeros(_roll_left(p, num_leading_zeros))
    found = lax.sort_key_val(found == 0, found)[1]
    size = shape_of(found)[0]
    keep = jnp.arange(size) < size - num_leading_zeros
    out: Array = jnp.where(keep, found, complex(np.nan, np.nan))
    return out


def roots(p: Any, *, strip_zeros: bool = True) -> Array:
    """The (complex) roots of the polynomial with coefficients `p` (highest power first).
    With `strip_zeros` leading zero coefficients are dropped (this needs concrete `p`);
    without it the roots they would remove are NaN."""
    (p,) = ensure_arraylike("roots", p)
    (p,) = promote_dtypes_inexact(p)
    p_arr = jnp.atleast_1d(p)
    del p
    shape = shape_of(p_arr)
    if len(shape) != 1:
        raise ValueError("Input must be a rank-1 array.")
    if shape[0] < 2:
        return jnp.array([], dtype=complex_dtype(dtype_of(p_arr)))
    num_leading_zeros = jnp.where(jnp.all(p_arr == 0), shape[0], jnp.argmin(p_arr == 0))
    if strip_zeros:
        if isinstance(num_leading_zeros, Tracer):
            raise ConcretizationTypeError(
                "Abstract tracer value encountered where concrete value is expected: "
                f"{num_leading_zeros._error_repr()}\n"
                "The error occurred in the jnp.roots() function. To use this within a "
                "JIT-compiled context, pass strip_zeros=False, but be aware that leading "
                "zeros will result in some returned roots being set to NaN."
                f"{num_leading_zeros._origin_msg()}\n"
            )
        return _roots_no_zeros(p_arr[int(num_leading_zeros) :])
    return _roots_with_zeros(p_arr, num_leading_zeros)


def _check_polyfit_args(x: Array, y: Array, deg: int) -> None:
    if deg < 0:
        raise ValueError("expected deg >= 0")
    x_shape, y_shape = shape_of(x), shape_of(y)
    if len(x_shape) != 1:
        raise TypeError("expected 1D vector for x")
    if x_shape[0] == 0:
        raise TypeError("expected non-empty vector for x")
    if len(y_shape) < 1 or len(y_shape) > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x_shape[0] != y_shape[0]:
        raise TypeError("expected x and y to have same length")


@partial(Jitted, static_argnames=("deg", "rcond", "full", "cov"))
def polyfit(
    x: Any,
    y: Any,
    deg: int,
    rcond: float | None = None,
    full: bool = False,
    w: Any = None,
    cov: bool | str = False,
) -> Array | tuple[Array, ...]:
    """The degree-`deg` polynomial (coefficients highest power first, one column per column of
    `y`) fitting the points `(x, y)` in least squares, each residual weighted by `w`. With
    `full`, also the residuals, the rank, the singular values and `rcond` (default
    `len(x) * eps`); with `cov`, the coefficients' covariance (scaled by the residuals unless
    `cov="unscaled"`)."""
    if w is None:
        x_arr, y_arr = ensure_arraylike("polyfit", x, y)
    else:
        x_arr, y_arr, w = ensure_arraylike("polyfit", x, y, w)
    del x, y
    deg = int(deg)
    order = deg + 1
    _check_polyfit_args(x_arr, y_arr, deg)
    n = shape_of(x_arr)[0]
    if rcond is None:
        rcond = n * float(jnp.finfo(dtype_of(x_arr)).eps)
    rcond = float(rcond)
    lhs = jnp.vander(x_arr, order)
    rhs = y_arr
    if w is not None:
        (w_arr,) = promote_dtypes_inexact(w)
        if len(shape_of(w_arr)) != 1:
            raise TypeError("expected a 1-d array for weights")
        if shape_of(w_arr)[0] != shape_of(y_arr)[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * w_arr[:, np.newaxis]
        rhs = rhs * (w_arr[:, np.newaxis] if len(shape_of(rhs)) == 2 else w_arr)
    # Unit-norm columns condition the problem better.
    scale = jnp.sqrt((lhs * lhs).sum(axis=0))
    lhs = lhs / scale[np.newaxis, :]
    c, resids, rank, s = jnp.linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale[np.newaxis, :]).T if len(shape_of(c)) > 1 else c / scale
    if full:
        return c, resids, rank, s, _lax_asarray(rcond)
    if cov:
        vbase = jnp.linalg.inv(jnp.dot(lhs.T, lhs))
        vbase = vbase / jnp.outer(scale, scale)
        if cov == "unscaled":
            fac = jnp.array(1.0)
        else:
            if n <= order:
                raise ValueError(
                    "the number of data points must exceed order to scale the covariance matrix"
                )
            fac = resids / (n - order)
        if len(shape_of(y_arr)) == 1:
            return c, vbase * jnp.atleast_1d(fac)[np.newaxis]
        return c, vbase[:, :, np.newaxis] * jnp.atleast_1d(fac)[np.newaxis, np.newaxis, :]
    return c


__all__ = ["polyfit", "roots"]
