"""Special matrices of `jax.scipy.linalg`: toeplitz, hankel, circulant, leslie, companion,
fiedler, fiedler_companion, convolution_matrix, hilbert, invhilbert, pascal, invpascal,
helmert, hadamard and dft.

Each builds its matrix with the operations JAX 0.10.2 uses (Toeplitz and Hankel from
`conv_general_dilated_patches`, binomials from `lgamma`), so values and staged equations
match JAX's. The builders taking arrays map over leading (batch) dimensions with
`jnp.vectorize`; those taking a size are `jit`s with the size static, as in JAX.
"""

from __future__ import annotations

import math
import operator
from functools import partial
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.ir import dtypes
from lamina_core.numpy import (
    at,
    check_arraylike,
    dtype_of,
    promote_args_inexact,
    promote_dtypes,
    shape_of,
)
from lamina_core.scipy._special_gamma import comb
from lamina_core.transforms import Jitted

Array = Any


def _patches_1d(v: Array, length: int, width: int) -> Array:
    """The `length - width + 1` windows of `width` consecutive entries of the vector `v`, as
    rows (JAX's Toeplitz/Hankel construction)."""
    return lax.conv_general_dilated_patches(
        jnp.reshape(v, (1, length, 1)),
        (width,),
        (1,),
        "VALID",
        dimension_numbers=("NTC", "IOT", "NTC"),
        precision=lax.Precision.HIGHEST,
    )[0]


def toeplitz(c: Any, r: Any = None) -> Array:
    """The Toeplitz matrix with first column `c` and first row `r` (default `conj(c)`);
    `r[0]` is ignored. Leading dimensions of `c` and `r` broadcast to a batch of matrices."""
    if r is None:
        check_arraylike("toeplitz", c)
        r = jnp.conjugate(jnp.asarray(c))
    else:
        check_arraylike("toeplitz", c, r)
    return _toeplitz(jnp.atleast_1d(jnp.asarray(c)), jnp.atleast_1d(jnp.asarray(r)))


def _toeplitz_2d(c: Array, r: Array) -> Array:
    (ncols,) = shape_of(c)
    (nrows,) = shape_of(r)
    if ncols == 0 or nrows == 0:
        return jnp.empty((ncols, nrows), dtype=jnp.promote_types(dtype_of(c), dtype_of(r)))
    length = ncols + nrows - 1
    elems = jnp.concatenate((c[::-1], r[1:]))
    return jnp.flip(_patches_1d(elems, length, nrows), axis=0)


_toeplitz = jnp.vectorize(_toeplitz_2d, signature="(m),(n)->(m,n)")


def hankel(c: Any, r: Any = None) -> Array:
    """The Hankel matrix H[i, j] = v[i + j] with v = concatenate([c, r[1:]]) (`r` defaults to
    zeros; `r[0]` is ignored). Leading dimensions broadcast to a batch of matrices."""
    if r is None:
        check_arraylike("hankel", c)
        c = jnp.asarray(c)
        r = jnp.zeros_like(c)
    else:
        check_arraylike("hankel", c, r)
        c = jnp.asarray(c)
        r = jnp.asarray(r)
    c_ndim, r_ndim = len(shape_of(c)), len(shape_of(r))
    if c_ndim == 0:
        raise ValueError("hankel: c must be at least 1-dimensional, got a scalar.")
    if r_ndim == 0:
        raise ValueError("hankel: r must be at least 1-dimensional, got a scalar.")
    # Equal ranks, so that vectorize broadcasts without rank promotion.
    if c_ndim < r_ndim:
        c = lax.expand_dims(c, range(r_ndim - c_ndim))
    elif r_ndim < c_ndim:
        r = lax.expand_dims(r, range(c_ndim - r_ndim))
    return _hankel(c, r)


def _hankel_2d(c: Array, r: Array) -> Array:
    (ncols,) = shape_of(c)
    (nrows,) = shape_of(r)
    if ncols == 0 or nrows == 0:
        return jnp.empty((ncols, nrows), dtype=jnp.result_type(c, r))
    v = jnp.concatenate((c, r[1:]))
    return _patches_1d(v, ncols + nrows - 1, nrows)


_hankel = jnp.vectorize(_hankel_2d, signature="(m),(n)->(m,n)")


def circulant(c: Any) -> Array:
    """The circulant matrix A[i, j] = c[(i - j) mod n] (first column `c`), per leading index."""
    check_arraylike("circulant", c)
    return _circulant(jnp.atleast_1d(jnp.asarray(c)))


def _circulant_2d(c: Array) -> Array:
    (n,) = shape_of(c)
    idx = jnp.remainder(jnp.arange(n)[:, None] - jnp.arange(n)[None, :], n)
    return c[idx]


_circulant = jnp.vectorize(_circulant_2d, signature="(n)->(n,n)")


def leslie(f: Any, s: Any) -> Array:
    """The Leslie matrix: fecundities `f` (length n >= 2) as its first row, survivals `s`
    (length n - 1) on its first subdiagonal."""
    check_arraylike("leslie", f, s)
    f_arr = jnp.atleast_1d(f)
    s_arr = jnp.atleast_1d(s)
    f_shape, s_shape = shape_of(f_arr), shape_of(s_arr)
    if f_shape[-1] < 2:
        raise ValueError(
            f"The length of f along the last axis must be at least 2; got shape {f_shape}."
        )
    if s_shape[-1] != f_shape[-1] - 1:
        raise ValueError(
            "Incorrect lengths for f and s. The length of s along the last axis must be one "
            f"less than the length of f; got f shape {f_shape} and s shape {s_shape}."
        )
    return _leslie(f_arr, s_arr)


def _leslie_2d(f: Array, s: Array) -> Array:
    f, s = promote_dtypes(f, s)
    return at(jnp.diag(s, k=-1))[0].set(f)


_leslie = jnp.vectorize(_leslie_2d, signature="(n),(m)->(n,n)")


def companion(a: Any) -> Array:
    """The (n-1)x(n-1) companion matrix of the polynomial coefficients `a` (highest first):
    first row -a[1:] / a[0], ones on the first subdiagonal."""
    (a,) = promote_args_inexact("companion", a)
    a = jnp.atleast_1d(a)
    if shape_of(a)[-1] < 2:
        raise ValueError(
            f"The length of `a` along the last axis must be at least 2; got shape {shape_of(a)}."
        )
    return _companion(a)


def _companion_2d(a: Array) -> Array:
    first_row = jnp.negative(a[1:]) / a[0]
    m = shape_of(a)[0] - 1
    out = jnp.eye(m, m, k=-1, dtype=dtype_of(first_row))
    return at(out)[0].set(first_row)


_companion = jnp.vectorize(_companion_2d, signature="(n)->(m,m)")


def fiedler(a: Any) -> Array:
    """The symmetric Fiedler matrix F[i, j] = |a[i] - a[j]|, per leading index."""
    check_arraylike("fiedler", a)
    arr = jnp.atleast_1d(a)
    return jnp.abs(arr[..., None] - arr[..., None, :])


def fiedler_companion(a: Any) -> Array:
    """The pentadiagonal Fiedler companion matrix of the polynomial coefficients `a` (highest
    first), whose eigenvalues are the polynomial's roots."""
    (a,) = promote_args_inexact("fiedler_companion", a)
    a = jnp.atleast_1d(a)
    if shape_of(a)[-1] == 0:
        raise ValueError(
            "fiedler_companion requires the last axis of 'a' to have nonzero length, but got "
            f"an array of shape {shape_of(a)}."
        )
    return _fiedler_companion(a)


def _fiedler_companion_2d(a: Array) -> Array:
    n = shape_of(a)[0] - 1
    if n == 0:
        return jnp.empty_like(a, shape=(0, 0))
    a = a / a[0]
    if n == 1:
        return jnp.negative(jnp.reshape(a[1:], (1, 1)))
    # Every cell is chosen by a mask over the full grid, which keeps shapes static; gathers
    # clip their index so the cells the masks drop never read out of range.
    i = jnp.arange(n)[:, None]
    j = jnp.arange(n)[None, :]
    super_val = jnp.negative(a[jnp.minimum(i + 2, n)])
    sub_val = jnp.negative(a[jnp.minimum(i + 1, n)])
    i_even = jnp.remainder(i, 2) == 0
    i_odd = jnp.remainder(i, 2) == 1
    one = jnp.array(1, dtype=dtype_of(a))
    zero = jnp.array(0, dtype=dtype_of(a))
    conditions = [
        (i == 0) & (j == 0),
        (i == 1) & (j == 0),
        (j == i + 1) & i_even,
        (j == i + 2) & i_even,
        (j == i - 1) & i_even & (i >= 2),
        (j == i - 2) & i_odd & (i >= 3),
    ]
    choices = [jnp.negative(a[1]), one, super_val, one, sub_val, one]
    return jnp.select(conditions, choices, default=zero)


_fiedler_companion = jnp.vectorize(_fiedler_companion_2d, signature="(n)->(m,m)")


@partial(Jitted, static_argnames=("n", "mode"))
def convolution_matrix(a: Any, n: int, mode: str = "full") -> Array:
    """The Toeplitz matrix A with `n` columns such that A @ v == jnp.convolve(a, v, mode)."""
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"n must be a positive integer; got {n}.")
    check_arraylike("convolution_matrix", a)
    a_arr = jnp.asarray(a)
    shape = shape_of(a_arr)
    if len(shape) == 0:
        raise ValueError("convolution_matrix: a must be at least 1-dimensional, got a scalar.")
    m = shape[-1]
    if m < 1:
        raise ValueError(f"len(a) must be at least 1; got shape {shape}.")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
    pad_widths = [(0, 0)] * (len(shape) - 1) + [(0, n - 1)]
    az = jnp.pad(a_arr, pad_widths)
    raz = jnp.pad(jnp.flip(a_arr, axis=-1), pad_widths)
    length = m + n - 1
    if mode == "same":
        trim = min(n, m) - 1
        tb = trim // 2
        te = trim - tb
    elif mode == "valid":
        tb = te = min(n, m) - 1
    else:
        tb = te = 0
    col0 = lax.slice_in_dim(az, tb, length - te, axis=-1)
    row0 = lax.slice_in_dim(raz, length - n - tb, length - tb, axis=-1)
    return toeplitz(col0, row0)


@partial(Jitted, static_argnames=("n",))
def hilbert(n: int) -> Array:
    """The n x n Hilbert matrix H[i, j] = 1 / (i + j + 1)."""
    a = lax.broadcasted_iota(float, (n, 1), 0)
    return jnp.true_divide(1, a + jnp.transpose(a) + 1)


@partial(Jitted, static_argnames=("n",))
def invhilbert(n: int) -> Array:
    """The inverse of the n x n Hilbert matrix, from its closed form in binomials."""
    a = jnp.arange(n, dtype=dtypes.canonicalize_dtype(float))
    i = a[:, None]
    j = a[None, :]
    s = i + j
    return (
        jnp.power(-1.0, s)
        * (s + 1.0)
        * comb(n + i, n - j - 1)
        * comb(n + j, n - i - 1)
        * jnp.power(comb(s, i), 2)
    )


_KINDS = ["symmetric", "lower", "upper"]


@Jitted
def _binom(n: Any, k: Any) -> Array:
    """n choose k as exp of log-gammas (JAX's pascal/invpascal binomial)."""
    a = lax.lgamma(n + 1.0)
    b = lax.lgamma(n - k + 1.0)
    c = lax.lgamma(k + 1.0)
    return lax.exp(a - b - c)


@partial(Jitted, static_argnames=("n", "kind"))
def pascal(n: int, kind: str | None = None) -> Array:
    """The n x n Pascal matrix: 'symmetric' (default) L L^T, or its 'lower' or 'upper'
    binomial factor L (float32)."""
    if kind is None:
        kind = "symmetric"
    if kind not in _KINDS:
        raise ValueError(f"Expected kind to be on of: {_KINDS}; got {kind}")
    a = jnp.arange(n, dtype=np.float32)
    lower = _binom(a[:, None], a[None, :])
    if kind == "lower":
        return lower
    if kind == "upper":
        return jnp.transpose(lower)
    return jnp.dot(lower, jnp.transpose(lower))


@partial(Jitted, static_argnames=("n", "kind"))
def invpascal(n: int, kind: str | None = None) -> Array:
    """The inverse of `pascal(n, kind)`: lower factor (-1)^(i-j) binom(i, j)."""
    if kind is None:
        kind = "symmetric"
    if kind not in _KINDS:
        raise ValueError(f"Expected kind to be one of: {_KINDS}; got {kind}")
    a = jnp.arange(n, dtype=dtypes.canonicalize_dtype(float))
    i = a[:, None]
    j = a[None, :]
    lower_inv = jnp.power(-1.0, i - j) * _binom(i, j)
    if kind == "lower":
        return lower_inv
    if kind == "upper":
        return jnp.transpose(lower_inv)
    return jnp.dot(jnp.transpose(lower_inv), lower_inv)


@partial(Jitted, static_argnames=("n", "full"))
def helmert(n: int, full: bool = False) -> Array:
    """The (n-1) x n Helmert matrix (n x n with `full`, its first row 1/sqrt(n))."""
    if n < 1:
        raise ValueError(f"n must be a positive integer; got {n}.")
    i = jnp.arange(n - 1)[:, None]
    j = jnp.arange(n)[None, :]
    k = i + 1
    k_f = k.astype(dtypes.canonicalize_dtype(float))
    denom = jnp.sqrt(k_f * (k_f + 1))
    h = jnp.where(
        j <= i,
        jnp.true_divide(1.0, denom),
        jnp.where(j == k, jnp.negative(k_f) / denom, jnp.zeros_like(denom)),
    )
    if full:
        first_row = jnp.full((1, n), jnp.true_divide(1.0, jnp.sqrt(n)), dtype=dtype_of(h))
        h = jnp.concatenate([first_row, h], axis=0)
    return h


@partial(Jitted, static_argnames=("n", "dtype"))
def hadamard(n: int, dtype: Any = int) -> Array:
    """The n x n Hadamard matrix (Sylvester's construction; n a power of 2)."""
    if n < 1 or not math.log2(n).is_integer():
        raise ValueError(f"n must be a positive power of 2; got {n}.")
    h = jnp.ones((1, 1), dtype=dtype)
    for _ in range(int(math.log2(n))):
        h = jnp.block([[h, h], [h, jnp.negative(h)]])
    return h


@partial(Jitted, static_argnames=("n", "scale", "dtype"))
def dft(n: int, scale: str | None = None, *, dtype: Any = None) -> Array:
    """The n x n DFT matrix W[i, j] = exp(-2 pi i j / n), unscaled or scaled by 1/sqrt(n)
    ('sqrtn') or 1/n ('n'), of a complex `dtype` (default complex64)."""
    if scale is not None and scale not in ("sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    if dtype is None:
        dtype = dtypes.canonicalize_dtype(complex)
    else:
        dtype = dtypes.canonicalize_dtype(dtype)
        if not dtypes.issubdtype(dtype, np.complexfloating):
            raise ValueError(f"dtype must be a complex floating-point type; got {dtype}.")
    a = jnp.arange(n, dtype=dtype)
    omegas = jnp.exp(-2j * np.pi * a[:, None] * a[None, :] / n)
    if scale == "sqrtn":
        omegas = omegas / jnp.sqrt(n)
    elif scale == "n":
        omegas = omegas / n
    return omegas
