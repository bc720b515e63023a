"""JAX's LU solves in `lax.linalg`: `lu_solve` (the pivoted triangular solves of one packed LU
factor, mapped with `vmap` over broadcast batch dimensions, in a `jit` named `_lu_solve`) and
`solve` (JAX's `lax.linalg._solve`): `a` factored once, outside differentiation (through
`stop_gradient`), the two triangular solves handed to `custom_linear_solve`, so derivatives
are further solves with the same factors. `jnp.linalg.solve` and the `eig` jvp rule use them.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import numpy as np

from lamina_core.lax._barrier import broadcast_shapes
from lamina_core.lax._dot_types import Precision
from lamina_core.lax._linalg import dot_general
from lamina_core.lax._linear_solve import custom_linear_solve
from lamina_core.lax._shape import iota, reshape, shape_of
from lamina_core.lax._sorting import sort_key_val
from lamina_core.lax._stop_gradient import stop_gradient
from lamina_core.lax._structural import broadcast_in_dim
from lamina_core.lax._types import Array
from lamina_core.lax.linalg._primitives import lu, triangular_solve
from lamina_core.transforms import Jitted, vmap


def _broadcast_to(x: Array, shape: tuple[int, ...]) -> Array:
    # Always a `broadcast_in_dim`, even when the shape already matches, as JAX stages it.
    rank = len(shape_of(x))
    return broadcast_in_dim(x, shape, tuple(range(len(shape) - rank, len(shape))))


def _lu_solve_one(lu: Array, permutation: Array, b: Array, trans: int) -> Array:
    """The solve for one packed LU factor; `b`'s trailing dimensions are flattened into
    columns."""
    b_shape = shape_of(b)
    m = shape_of(lu)[0]
    x = reshape(b, (m, math.prod(b_shape[1:])))
    if trans == 0:
        x = x[permutation, :]
        x = triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
        x = triangular_solve(lu, x, left_side=True, lower=False)
    elif trans in (1, 2):
        conj = trans == 2
        x = triangular_solve(lu, x, left_side=True, lower=False, transpose_a=True, conjugate_a=conj)
        x = triangular_solve(
            lu,
            x,
            left_side=True,
            lower=True,
            unit_diagonal=True,
            transpose_a=True,
            conjugate_a=conj,
        )
        n = shape_of(permutation)[0]
        _, inverse = sort_key_val(permutation, iota(np.dtype("int32"), n))
        x = x[inverse, :]
    else:
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    return reshape(x, b_shape)


@partial(Jitted, static_argnums=(3,))
def _lu_solve(lu: Array, permutation: Array, b: Array, trans: int) -> Array:
    lu_shape, b_shape = shape_of(lu), shape_of(b)
    if len(lu_shape) < 2 or lu_shape[-1] != lu_shape[-2]:
        raise ValueError(
            f"last two dimensions of LU decomposition must be equal, got shape {lu_shape}"
        )
    if len(b_shape) < 1:
        raise ValueError(f"b matrix must have rank >= 1, got shape {b_shape}")
    rhs_vector = len(lu_shape) == len(b_shape) + 1
    if rhs_vector:
        if b_shape[-1] != lu_shape[-1]:
            raise ValueError(
                "When LU decomposition matrix and b have the same number of dimensions, last "
                f"axis of LU decomposition matrix (shape {lu_shape}) and b array (shape "
                f"{b_shape}) must match"
            )
        b = b[..., None]
    elif b_shape[-2] != lu_shape[-1]:
        raise ValueError(
            "When LU decomposition matrix and b different numbers of dimensions, last axis of "
            f"LU decomposition matrix (shape {lu_shape}) and second to last axis of b array "
            f"(shape {b_shape}) must match"
        )
    perm_shape = shape_of(permutation)
    batch = broadcast_shapes(lu_shape[:-2], perm_shape[:-1], shape_of(b)[:-2])
    lu = _broadcast_to(lu, (*batch, *lu_shape[-2:]))
    permutation = _broadcast_to(permutation, (*batch, perm_shape[-1]))
    b = _broadcast_to(b, (*batch, *shape_of(b)[-2:]))
    fn: Any = _lu_solve_one
    for _ in batch:
        fn = vmap(fn, in_axes=(0, 0, 0, None))
    x = fn(lu, permutation, b, trans)
    return x[..., 0] if rhs_vector else x


def lu_solve(lu: Any, permutation: Any, b: Any, trans: int = 0) -> Array:
    """x with op(a) x = b from `a`'s packed LU factor and row permutation (op per `trans`:
    0 none, 1 transpose, 2 conjugate transpose), broadcasting over batch dimensions."""
    out: Array = _lu_solve(lu, permutation, b, trans)
    return out


def batched_matvec(a: Array, b: Array) -> Array:
    """(..., n, m) times (..., m), batch dimensions broadcast."""
    a_shape, b_shape = shape_of(a), shape_of(b)
    batch = broadcast_shapes(a_shape[:-2], b_shape[:-1])
    nb = len(batch)
    a = _broadcast_to(a, (*batch, *a_shape[-2:]))
    b = _broadcast_to(b, (*batch, b_shape[-1]))
    dims = (([nb + 1], [nb]), (list(range(nb)), list(range(nb))))
    return dot_general(a, b, dims, precision=Precision.HIGHEST)


def check_solve_shapes(a: Array, b: Array) -> None:
    """Raises JAX's error unless a is (..., m, m) and b (..., m) or (..., m, k)."""
    a_shape, b_shape = shape_of(a), shape_of(b)
    a_ndim, b_ndim = len(a_shape), len(b_shape)
    if not (
        a_ndim >= 2
        and b_ndim in (a_ndim, a_ndim - 1)
        and a_shape[-1] == a_shape[-2] == b_shape[a_ndim - 2]
    ):
        raise ValueError(
            "The arguments to solve must have shapes a=[..., m, m] and b=[..., m, k] or "
            f"b=[..., m]; got a={a_shape} and b={b_shape}"
        )


def solve(a: Array, b: Array) -> Array:
    """JAX's `lax.linalg._solve`: a (..., m, m) system, b (..., m) or (..., m, k)."""
    check_solve_shapes(a, b)
    a_shape, b_shape = shape_of(a), shape_of(b)
    a_ndim, b_ndim = len(a_shape), len(b_shape)
    out_shape = tuple(
        da if db == 1 else db for da, db in zip((*a_shape[:-1], 1), b_shape, strict=False)
    )
    b = broadcast_in_dim(b, out_shape, tuple(range(b_ndim)))
    factor, _, permutation = lu(stop_gradient(a))

    def custom_solve(rhs: Array) -> Array:
        return custom_linear_solve(
            lambda x: batched_matvec(a, x),
            rhs,
            solve=lambda _, x: lu_solve(factor, permutation, x, trans=0),
            transpose_solve=lambda _, x: lu_solve(factor, permutation, x, trans=1),
        )

    if a_ndim == b_ndim + 1:
        return custom_solve(b)
    out: Array = vmap(custom_solve, b_ndim - 1, max(a_ndim, b_ndim) - 1)(b)
    return out


__all__ = ["batched_matvec", "check_solve_shapes", "lu_solve", "solve"]
