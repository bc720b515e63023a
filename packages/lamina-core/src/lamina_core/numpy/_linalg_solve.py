"""The linear solvers of `lamina.numpy.linalg` (`solve`, `inv`, `lstsq`, `tensorsolve`,
`tensorinv`, `matrix_power`), staged as JAX 0.10.2 stages them.

`solve` vectorizes `lax.linalg`'s LU solve (`lax/linalg/_solve.py`, where `lu_solve`,
`check_solve_shapes` and `batched_matvec` live; they are imported here for `scipy.linalg`),
whose derivatives are further solves with the same factors. `inv` is a solve against the
identity.
"""

from __future__ import annotations

import functools
import math
import operator
from typing import Any

import lamina_core.numpy as jnp
from lamina_core import lax
from lamina_core.lax import batched_matvec as batched_matvec
from lamina_core.lax import check_solve_shapes as check_solve_shapes
from lamina_core.lax import lu_solve as lu_solve
from lamina_core.lax import solve as _lax_solve
from lamina_core.numpy._linalg_svd import svd
from lamina_core.numpy._promote import promote_dtypes_inexact
from lamina_core.numpy._reductions import ensure_arraylike
from lamina_core.numpy._util import Array, dtype_of, shape_of
from lamina_core.transforms import Jitted


@Jitted
def solve(a: Any, b: Any) -> Array:
    """x with a @ x = b for square (stacks of) `a`; `b` is a vector (..., m) only when it is
    1-D, otherwise a matrix (..., m, n) of right-hand sides."""
    a, b = ensure_arraylike("jnp.linalg.solve", a, b)
    a, b = promote_dtypes_inexact(a, b)
    a_shape, b_shape = shape_of(a), shape_of(b)
    if len(a_shape) < 2:
        raise ValueError(f"left hand array must be at least two dimensional; got a.shape={a_shape}")
    if (
        len(b_shape) > 1
        and len(a_shape) == len(b_shape) + 1
        and a_shape[-1] == b_shape[-1]
        and a_shape[-1] != b_shape[-2]
    ):
        raise ValueError(
            f"Invalid shapes for solve: {a_shape}, {b_shape}. Prior to JAX v0.5.0, this would "
            "have been treated as a batched 1-dimensional solve. To recover this behavior, use "
            "solve(a, b[..., None]).squeeze(-1)."
        )
    signature = "(m,m),(m)->(m)" if len(b_shape) == 1 else "(m,m),(m,n)->(m,n)"
    out: Array = jnp.vectorize(_lax_solve, signature=signature)(a, b)
    return out


@Jitted
def inv(a: Any) -> Array:
    """The inverse of each square matrix in `a` (..., n, n)."""
    (arr,) = ensure_arraylike("jnp.linalg.inv", a)
    shape = shape_of(arr)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"Argument to inv must have shape [..., n, n], got {shape}.")
    eye = jnp.eye(shape[-1], dtype=dtype_of(arr))
    out: Array = solve(arr, lax.broadcast(eye, shape[:-2]))
    return out


@functools.partial(Jitted, static_argnames=("n",))
def matrix_power(a: Any, n: int) -> Array:
    """`a` (..., m, m) to the integer power `n` by repeated squaring (`inv(a)` first when `n` is
    negative; the identity when 0)."""
    (arr,) = ensure_arraylike("jnp.linalg.matrix_power", a)
    shape = shape_of(arr)
    if len(shape) < 2:
        raise TypeError(
            f"{len(shape)}-dimensional array given. Array must be at least two-dimensional"
        )
    if shape[-2] != shape[-1]:
        raise TypeError("Last 2 dimensions of the array must be square")
    try:
        n = operator.index(n)
    except TypeError as err:
        raise TypeError(f"exponent must be an integer, got {n}") from err
    if n == 0:
        out: Array = jnp.broadcast_to(jnp.eye(shape[-2], dtype=dtype_of(arr)), shape)
        return out
    if n < 0:
        arr = inv(arr)
        n = -n
    if n <= 3:
        result = arr
        for _ in range(n - 1):
            result = result @ arr
        return result
    square: Array | None = None
    acc: Array | None = None
    while n > 0:
        square = arr if square is None else square @ square
        n, bit = divmod(n, 2)
        if bit:
            acc = square if acc is None else acc @ square
    assert acc is not None
    return acc


def tensorinv(a: Any, ind: int = 2) -> Array:
    """The tensor inverse of `a` over its first `ind` axes: shape a.shape[ind:] + a.shape[:ind]."""
    (arr,) = ensure_arraylike("tensorinv", a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer; got ind={ind}")
    shape = shape_of(arr)
    contracting, batch = shape[:ind], shape[ind:]
    rows, cols = math.prod(contracting), math.prod(batch)
    if rows != cols:
        raise ValueError(
            "tensorinv is only possible when the product of the first `ind` dimensions equals "
            f"that of the remaining dimensions. got arr.shape={shape} with ind={ind}."
        )
    out: Array = inv(arr.reshape((rows, cols))).reshape(*batch, *contracting)
    return out


def tensorsolve(a: Any, b: Any, axes: tuple[int, ...] | None = None) -> Array:
    """x with tensordot(a, x, x.ndim) = b; `axes` of `a` are moved to the end first."""
    a_arr, b_arr = ensure_arraylike("tensorsolve", a, b)
    if axes is not None:
        last = len(shape_of(a_arr)) - 1
        a_arr = jnp.moveaxis(a_arr, axes, len(axes) * (last,))
    a_shape, b_shape = shape_of(a_arr), shape_of(b_arr)
    out_shape = a_shape[len(b_shape) :]
    if a_shape[: len(b_shape)] != b_shape:
        raise ValueError(
            "After moving axes to end, leading shape of a must match shape of b. got "
            f"a.shape={a_shape}, b.shape={b_shape}"
        )
    b_size = math.prod(b_shape)
    if b_size != math.prod(out_shape):
        raise ValueError(
            "Input arrays must have prod(a.shape[:b.ndim]) == prod(a.shape[b.ndim:]); got "
            f"a.shape={a_shape}, b.ndim={len(b_shape)}."
        )
    flat = a_arr.reshape(b_size, math.prod(out_shape))
    out: Array = solve(flat, b_arr.ravel()).reshape(out_shape)
    return out


def _lstsq(a: Any, b: Any, rcond: Any, *, numpy_resid: bool) -> tuple[Array, Array, Array, Array]:
    a, b = promote_dtypes_inexact(a, b)
    if shape_of(a)[0] != shape_of(b)[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    b_vector = len(shape_of(b)) == 1
    if b_vector:
        b = b[:, None]
    if len(shape_of(a)) != 2:
        raise TypeError(
            f"{len(shape_of(a))}-dimensional array given. Array must be two-dimensional"
        )
    if len(shape_of(b)) != 2:
        raise TypeError(
            f"{len(shape_of(b))}-dimensional array given. Array must be one or two-dimensional"
        )
    m, n = shape_of(a)
    dtype = dtype_of(a)
    highest = lax.Precision.HIGHEST
    if m * n == 0:
        s = jnp.empty(0, dtype=dtype)
        rank = jnp.array(0, dtype=int)
        x = jnp.zeros((n, *shape_of(b)[1:]), dtype=dtype)
    else:
        eps = jnp.finfo(dtype).eps
        rcond = float(eps) * max(n, m) if rcond is None else jnp.where(rcond < 0, eps, rcond)
        u, s, vt = svd(a, full_matrices=False)
        # Singular values below rcond * the largest count as zero and are not inverted.
        mask = (s > 0) & (s >= jnp.array(rcond, dtype=dtype_of(s)) * s[0])
        rank = mask.sum()
        safe_s = jnp.where(mask, s, 1).astype(dtype)
        s_inv = jnp.where(mask, 1 / safe_s, 0)[:, None]
        u_t_b = jnp.matmul(u.conj().T, b, precision=highest)
        x = jnp.matmul(vt.conj().T, s_inv * u_t_b, precision=highest)
    if numpy_resid and (rank < n or m <= n):
        resid = jnp.asarray([])
    else:
        resid = jnp.linalg.norm(b - jnp.matmul(a, x, precision=highest), axis=0) ** 2
    if b_vector:
        x = x.ravel()
    return x, resid, rank, s


# JAX jits the `partial`, which keeps `_lstsq`'s name; so does this.
_jit_lstsq = Jitted(functools.update_wrapper(functools.partial(_lstsq, numpy_resid=False), _lstsq))


def lstsq(
    a: Any, b: Any, rcond: float | None = None, *, numpy_resid: bool = False
) -> tuple[Array, Array, Array, Array]:
    """(x, residuals, rank, singular values) for the least-squares solution of a @ x = b, from
    the SVD of `a`; singular values below `rcond` times the largest are dropped. Residuals are
    always returned unless `numpy_resid` (then NumPy's rule, not jittable)."""
    a, b = ensure_arraylike("jnp.linalg.lstsq", a, b)
    if numpy_resid:
        return _lstsq(a, b, rcond, numpy_resid=True)
    out: tuple[Array, Array, Array, Array] = _jit_lstsq(a, b, rcond)
    return out
