"""Sparse helpers (`jax.experimental.sparse.util`): `SparseInfo`, the static description of a
sparse array carried in primitive params, n-fold (broadcasting) `vmap`, stored-element counts
and the shape check of `dot_general` on sparse operands. Knows no sparse format."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.ir import ShapedArray, abstract_eval_rules
from lamina_core.transforms import flatten_axes, jit, vmap
from lamina_core.tree.tree_util import tree_flatten, tree_unflatten

Array = Any
Shape = tuple[int, ...]


class SparseInfo(NamedTuple):
    """The static part of a sparse array: its dense shape and what is known of its indices."""

    shape: Shape
    indices_sorted: bool = False
    unique_indices: bool = False


def compiled_impl(impl: Callable[..., Any], static_argnames: Sequence[str]) -> Callable[..., Any]:
    """`impl` (a primitive's Python implementation) compiled once per set of params: the
    eager meaning of a sparse primitive, as one program rather than operation by operation."""
    compiled = jit(impl, static_argnames=tuple(static_argnames))

    def run(*args: Any, **params: Any) -> Any:
        return compiled(*args, **params)

    return run


def nfold_vmap(
    fun: Callable[..., Any], N: int, *, broadcasted: bool = True, in_axes: Any = 0
) -> Callable[..., Any]:
    """`fun` under `N` nested `vmap`s (broadcasting ones by default: size-1 axes broadcast)."""
    mapper = broadcasting_vmap if broadcasted else vmap
    for _ in range(N):
        fun = mapper(fun, in_axes=in_axes)
    return fun


def broadcasting_vmap(fun: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0) -> Any:
    """`vmap` where a mapped axis of size 1 is broadcast against the others."""

    @functools.wraps(fun)
    def batched_fun(*args: Any) -> Any:
        args_flat, in_tree = tree_flatten(args)
        axes_flat = flatten_axes("vmap in_axes", in_tree, in_axes, kws=False)
        size = max(a.shape[i] for a, i in zip(args_flat, axes_flat, strict=True) if i is not None)
        if size > 1:
            if any(
                i is not None and a.shape[i] not in (1, size)
                for a, i in zip(args_flat, axes_flat, strict=True)
            ):
                raise ValueError("broadcasting_vmap: mismatched input shapes")
            pairs = [
                (a, None)
                if i is None
                else (lax.squeeze(a, (i,)), None)
                if a.shape[i] == 1
                else (a, i)
                for a, i in zip(args_flat, axes_flat, strict=True)
            ]
            args_flat = [a for a, _ in pairs]
            axes_flat = [i for _, i in pairs]
        new_args = tree_unflatten(in_tree, args_flat)
        new_axes = tree_unflatten(in_tree, axes_flat)
        return vmap(fun, in_axes=new_axes, out_axes=out_axes)(*new_args)

    return batched_fun


@jit
def _csr_to_coo(indices: Array, indptr: Array) -> tuple[Array, Array]:
    """COO (row, col) of CSR (indices, indptr)."""
    return jnp.cumsum(jnp.at(jnp.zeros_like(indices))[indptr].add(1)) - 1, indices


def _csr_extract(indices: Array, indptr: Array, mat: Array) -> Array:
    """The values of the dense `mat` at CSR indices."""
    row, col = _csr_to_coo(indices, indptr)
    return _coo_extract(row, col, mat)


def _coo_extract(row: Array, col: Array, mat: Array) -> Array:
    """The values of the dense `mat` at COO indices."""
    return mat[row, col]


def _count_stored_elements_per_batch(mat: Array, n_batch: int = 0, n_dense: int = 0) -> Array:
    """Per batch element, the number of nonzero (sparse-index) entries of a dense array."""
    mat = jnp.asarray(mat)
    mask = mat != 0
    if n_dense > 0:
        mask = mask.any(tuple(-(i + 1) for i in range(n_dense)))
    return mask.sum(tuple(range(n_batch, mask.ndim)))


def _count_stored_elements(mat: Array, n_batch: int = 0, n_dense: int = 0) -> Array:
    """The nse a sparse form of the dense `mat` needs: the largest per-batch count."""
    return _count_stored_elements_per_batch(mat, n_batch, n_dense).max(initial=0)


def _dot_general_validated_shape(
    lhs_shape: Sequence[int], rhs_shape: Sequence[int], dimension_numbers: Any
) -> Shape:
    """The shape `dot_general` gives operands of these shapes (its errors for bad input)."""
    out = abstract_eval_rules[lax.dot_general_p](
        ShapedArray(tuple(lhs_shape), np.dtype(np.float32)),
        ShapedArray(tuple(rhs_shape), np.dtype(np.float32)),
        dimension_numbers=dimension_numbers,
        precision=None,
        preferred_element_type=None,
        out_sharding=None,
    )
    return tuple(out.shape)  # type: ignore[union-attr]  # dot_general has one result


__all__ = [
    "Shape",
    "SparseInfo",
    "broadcasting_vmap",
    "compiled_impl",
    "nfold_vmap",
]
