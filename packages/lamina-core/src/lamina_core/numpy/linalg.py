"""`lamina.numpy.linalg`: linear algebra as `jax.numpy.linalg`. The norms: `norm` (vector
norms of every order; matrix norms `fro`, 1, -1, inf, -inf, and `nuc`, 2, -2 from singular
values) and `vector_norm`, each JAX's formula, `norm` jitted as JAX's is; and, on the
`lax.linalg` factorizations, `cholesky`, `det` and `slogdet` (in `_linalg_lu`), `eigh`,
`eigvalsh` and `qr` (in `_linalg_decomp`), `svd`, `svdvals`, `matrix_rank`, `pinv` and `cond`
(in `_linalg_svd`), `solve`, `inv`, `lstsq`, `matrix_power`, `tensorsolve` and `tensorinv`
(in `_linalg_solve`, `solve` on `custom_linear_solve`), and the array-API names `outer`,
`cross`, `vecdot`, `matrix_transpose`, `diagonal`, `trace`, `tensordot`, `matmul`,
`matrix_norm` with `multi_dot` (in `_linalg_array_api`). `eig`, `eigvals` (in `_linalg_eig`, on
LAPACK's nonsymmetric eigensolver `geev`)."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from lamina_core.ir import dtypes
from lamina_core.numpy import _reductions, _ufuncs, _ufuncs_composite
from lamina_core.numpy._linalg_array_api import (
    cross,
    diagonal,
    matmul,
    matrix_norm,
    matrix_transpose,
    multi_dot,
    outer,
    tensordot,
    trace,
    vecdot,
)
from lamina_core.numpy._linalg_decomp import EighResult, QRResult, eigh, eigvalsh, qr
from lamina_core.numpy._linalg_eig import EigResult, eig, eigvals
from lamina_core.numpy._linalg_lu import SlogdetResult, cholesky, det, slogdet
from lamina_core.numpy._linalg_solve import (
    inv,
    lstsq,
    matrix_power,
    solve,
    tensorinv,
    tensorsolve,
)
from lamina_core.numpy._linalg_svd import (
    SVDResult,
    cond,
    matrix_rank,
    pinv,
    singular_value_norm,
    svd,
    svdvals,
)
from lamina_core.numpy._promote import promote_dtypes_inexact
from lamina_core.numpy._reductions import canonicalize_axis
from lamina_core.numpy._util import Array, lax_const, shape_of
from lamina_core.transforms import Jitted


def vector_norm(
    x: Any, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False, ord: Any = 2
) -> Array:
    """The `ord`-norm of `x` along `axis` (all of `x` if None): 2 by default; inf, -inf, 0
    (the count of nonzeros), 1, or any other number p."""
    if ord is None or ord == 2:
        return _ufuncs.sqrt(
            _reductions.sum(_ufuncs.real(x * _ufuncs.conjugate(x)), axis=axis, keepdims=keepdims)
        )
    if ord == np.inf:
        return _reductions.max(_ufuncs.absolute(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return _reductions.min(_ufuncs.absolute(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        nonzero_dtype = dtypes.finfo(x.dtype).dtype
        return _reductions.sum(x != 0, dtype=nonzero_dtype, axis=axis, keepdims=keepdims)
    if ord == 1:
        return _reductions.sum(_ufuncs.absolute(x), axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        msg = f"Invalid order '{ord}' for vector norm."
        if ord == "inf":
            msg += "Use 'jax.numpy.inf' instead."
        if ord == "-inf":
            msg += "Use '-jax.numpy.inf' instead."
        raise ValueError(msg)
    abs_x = _ufuncs.absolute(x)
    ord_arr = lax_const(abs_x, ord)
    ord_inv = lax_const(abs_x, 1.0 / ord_arr)
    out = _reductions.sum(abs_x**ord_arr, axis=axis, keepdims=keepdims)
    return _ufuncs_composite.power(out, ord_inv)


@partial(Jitted, static_argnames=("ord", "axis", "keepdims"))
def norm(
    x: Any,
    ord: int | str | None = None,
    axis: tuple[int, ...] | int | None = None,
    keepdims: bool = False,
) -> Array:
    """A vector norm (one axis) or a matrix norm (two axes) of `x`, as `numpy.linalg.norm`."""
    (x,) = promote_dtypes_inexact(x)
    ndim = len(shape_of(x))
    if axis is None:
        if ord is None:  # any rank, as NumPy's undocumented behaviour
            return _ufuncs.sqrt(
                _reductions.sum(_ufuncs.real(x * _ufuncs.conjugate(x)), keepdims=keepdims)
            )
        axes = tuple(range(ndim))
    elif isinstance(axis, tuple):
        axes = tuple(canonicalize_axis(a, ndim) for a in axis)
    else:
        axes = (canonicalize_axis(axis, ndim),)
    if len(axes) == 1:
        return vector_norm(x, ord=2 if ord is None else ord, axis=axes, keepdims=keepdims)
    if len(axes) != 2:
        raise ValueError(
            f"Improper number of axes for norm: axis={axes}. Pass one axis to compute a "
            "vector-norm, or two axes to compute a matrix-norm."
        )
    row_axis, col_axis = axes
    if ord is None or ord in ("f", "fro"):
        return _ufuncs.sqrt(
            _reductions.sum(_ufuncs.real(x * _ufuncs.conjugate(x)), axis=axes, keepdims=keepdims)
        )
    if ord in (1, -1):
        if not keepdims and col_axis > row_axis:
            col_axis -= 1
        sums = _reductions.sum(_ufuncs.absolute(x), axis=row_axis, keepdims=keepdims)
        if ord == 1:
            return _reductions.max(sums, axis=col_axis, keepdims=keepdims, initial=0)
        return _reductions.min(sums, axis=col_axis, keepdims=keepdims)
    if ord in (np.inf, -np.inf):
        if not keepdims and row_axis > col_axis:
            row_axis -= 1
        sums = _reductions.sum(_ufuncs.absolute(x), axis=col_axis, keepdims=keepdims)
        if ord == np.inf:
            return _reductions.max(sums, axis=row_axis, keepdims=keepdims, initial=0)
        return _reductions.min(sums, axis=row_axis, keepdims=keepdims)
    if ord in ("nuc", 2, -2):
        return singular_value_norm(x, ord, axes, keepdims)
    raise ValueError(f"Invalid order '{ord}' for matrix norm.")


__all__ = [
    "EigResult",
    "EighResult",
    "QRResult",
    "SVDResult",
    "SlogdetResult",
    "cholesky",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "lstsq",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "multi_dot",
    "norm",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "tensorinv",
    "tensorsolve",
    "trace",
    "vecdot",
    "vector_norm",
]
