"""The array-API names of `lamina.numpy.linalg` (`outer`, `cross`, `vecdot`, `matrix_transpose`,
`diagonal`, `trace`, `tensordot`, `matmul`, `matrix_norm`) and `multi_dot`, as JAX 0.10.2 has
them: each checks its own inputs, then hands over to the `lamina.numpy` function of the same
kind, acting on the last axes."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import lamina_core.numpy as jnp
from lamina_core import lax
from lamina_core.numpy._reductions import ensure_arraylike
from lamina_core.numpy._util import Array, DTypeLike, shape_of


def outer(x1: Any, x2: Any, /) -> Array:
    """The outer product x1[i] * x2[j] of two vectors."""
    x1, x2 = ensure_arraylike("jnp.linalg.outer", x1, x2)
    nd1, nd2 = len(shape_of(x1)), len(shape_of(x2))
    if nd1 != 1 or nd2 != 1:
        raise ValueError(
            f"Input arrays must be one-dimensional, but they are x1.ndim={nd1} x2.ndim={nd2}"
        )
    out: Array = x1[:, None] * x2[None, :]
    return out


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Array:
    """The cross product of (stacks of) 3-vectors along `axis`."""
    # JAX's check names `outer` here; its messages are kept.
    x1, x2 = ensure_arraylike("jnp.linalg.outer", x1, x2)
    n1, n2 = shape_of(x1)[axis], shape_of(x2)[axis]
    if n1 != 3 or n2 != 3:
        raise ValueError(
            "Both input arrays must be (arrays of) 3-dimensional vectors, but they have "
            f"x1.shape[axis]={n1} and x2.shape[axis]={n2}"
        )
    out: Array = jnp.cross(x1, x2, axis=axis)
    return out


def vecdot(
    x1: Any,
    x2: Any,
    /,
    *,
    axis: int = -1,
    precision: Any = None,
    preferred_element_type: DTypeLike | None = None,
) -> Array:
    """The conjugate dot product of `x1` and `x2` along `axis`, batched over the rest."""
    x1, x2 = ensure_arraylike("jnp.linalg.vecdot", x1, x2)
    out: Array = jnp.vecdot(
        x1, x2, axis=axis, precision=precision, preferred_element_type=preferred_element_type
    )
    return out


def matrix_transpose(x: Any, /) -> Array:
    """`x` with its last two axes swapped."""
    (arr,) = ensure_arraylike("jnp.linalg.matrix_transpose", x)
    ndim = len(shape_of(arr))
    if ndim < 2:
        raise ValueError(f"matrix_transpose requires at least 2 dimensions; got ndim={ndim}")
    return lax.transpose(arr, (*range(ndim - 2), ndim - 1, ndim - 2))


def diagonal(x: Any, /, *, offset: int = 0) -> Array:
    """The `offset` diagonal of each matrix in `x` (its last two axes)."""
    (arr,) = ensure_arraylike("jnp.linalg.diagonal", x)
    out: Array = jnp.diagonal(arr, offset=offset, axis1=-2, axis2=-1)
    return out


def trace(x: Any, /, *, offset: int = 0, dtype: DTypeLike | None = None) -> Array:
    """The sum of the `offset` diagonal of each matrix in `x` (its last two axes)."""
    (arr,) = ensure_arraylike("jnp.linalg.trace", x)
    out: Array = jnp.trace(arr, offset=offset, axis1=-2, axis2=-1, dtype=dtype)
    return out


def tensordot(
    x1: Any,
    x2: Any,
    /,
    *,
    axes: int | tuple[Sequence[int], Sequence[int]] = 2,
    precision: Any = None,
    preferred_element_type: DTypeLike | None = None,
    out_sharding: Any = None,
) -> Array:
    """`numpy.tensordot` with `axes` keyword-only."""
    x1, x2 = ensure_arraylike("jnp.linalg.tensordot", x1, x2)
    out: Array = jnp.tensordot(
        x1,
        x2,
        axes=axes,
        precision=precision,
        preferred_element_type=preferred_element_type,
        out_sharding=out_sharding,
    )
    return out


def matmul(
    x1: Any,
    x2: Any,
    /,
    *,
    precision: Any = None,
    preferred_element_type: DTypeLike | None = None,
) -> Array:
    """`x1 @ x2`, as `numpy.matmul`."""
    x1, x2 = ensure_arraylike("jnp.linalg.matmul", x1, x2)
    out: Array = jnp.matmul(
        x1, x2, precision=precision, preferred_element_type=preferred_element_type
    )
    return out


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: str | int = "fro") -> Array:
    """The `ord` matrix norm of each matrix in `x` (its last two axes)."""
    (arr,) = ensure_arraylike("jnp.linalg.matrix_norm", x)
    out: Array = jnp.linalg.norm(arr, ord=ord, keepdims=keepdims, axis=(-2, -1))
    return out


def multi_dot(arrays: Sequence[Any], *, precision: Any = None) -> Array:
    """The product of a chain of matrices (the ends may be vectors), in the cheapest order."""
    checked = ensure_arraylike("jnp.linalg.multi_dot", *arrays)
    # As in JAX, a single array stands for the sequence of its rows.
    arrs = list(checked[0]) if len(checked) == 1 else checked
    if len(arrs) < 2:
        raise ValueError(f"multi_dot requires at least two arrays; got len(arrays)={len(arrs)}")
    shapes = [shape_of(a) for a in arrs]
    if not (
        len(shapes[0]) in (1, 2)
        and len(shapes[-1]) in (1, 2)
        and all(len(s) == 2 for s in shapes[1:-1])
    ):
        raise ValueError(
            "multi_dot: input arrays must all be two-dimensional, except for the first and "
            f"last array which may be 1 or 2 dimensional. Got array shapes {shapes}"
        )
    if any(s[-1] != t[0] for s, t in itertools.pairwise(shapes)):
        raise ValueError(
            "multi_dot: last dimension of each array must match first dimension of following "
            f"array. Got array shapes {shapes}"
        )
    # Axis i joins array i - 1 to array i; a vector at either end keeps only its inner axis.
    labels: list[tuple[int, ...]] = [(i, i + 1) for i in range(len(arrs))]
    if len(shapes[0]) == 1:
        labels[0] = labels[0][1:]
    if len(shapes[-1]) == 1:
        labels[-1] = labels[-1][:1]
    operands = itertools.chain(*zip(arrs, labels, strict=True))
    out: Array = jnp.einsum(*operands, optimize="auto", precision=precision)
    return out
