"""Sparse-aware `grad`, `value_and_grad`, `jacfwd`, `jacrev` and `jacobian`
(`jax.experimental.sparse.ad`): a sparse argument is differentiated through its `data`
buffer only, so its gradient lies in the subspace of its sparsity pattern and is returned as a
sparse array of the same pattern."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Sequence
from typing import Any

from lamina_core.jacobians import jacfwd as _jacfwd
from lamina_core.jacobians import jacrev as _jacrev
from lamina_core.sparse._base import JAXSparse
from lamina_core.transforms import grad as _grad
from lamina_core.transforms import value_and_grad as _value_and_grad
from lamina_core.transforms import vmap
from lamina_core.tree.tree_util import tree_flatten, tree_leaves, tree_unflatten


def is_sparse(x: Any) -> bool:
    return isinstance(x, JAXSparse)


def _split(seq: Sequence[int], sizes: Sequence[int]) -> list[list[int]]:
    out, start = [], 0
    for n in sizes:
        out.append(list(seq[start : start + n]))
        start += n
    return out


def _index_tuple(argnums: int | Sequence[int]) -> tuple[int, ...]:
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def flatten_fun_for_sparse_ad(
    fun: Callable[..., Any], argnums: int | Sequence[int], args: tuple[Any, ...]
) -> tuple[Callable[..., Any], tuple[int, ...], list[Any], Callable[[Any], Any]]:
    """`fun` of the flat dense buffers of `args`, the buffers to differentiate (the `data` of
    a sparse argument, every leaf of a dense one), the buffers, and how to rebuild gradients."""
    argnums_tup = _index_tuple(argnums)
    assert all(0 <= a < len(args) for a in argnums_tup)
    # Flatten twice: to sparse and dense objects, then to dense buffers.
    args_flat1, tree1 = tree_flatten(args, is_leaf=is_sparse)
    leaf_argnums1 = _split(range(tree1.num_leaves), [c.num_leaves for c in tree1.children()])
    argnums_flat1 = list(
        itertools.chain.from_iterable(n for i, n in enumerate(leaf_argnums1) if i in argnums_tup)
    )
    args_flat, tree2 = tree_flatten(args_flat1)
    leaf_argnums2 = _split(range(tree2.num_leaves), [c.num_leaves for c in tree2.children()])
    leaf_argnums2 = [
        n[:1] if is_sparse(a) else n for a, n in zip(args_flat1, leaf_argnums2, strict=True)
    ]
    argnums_flat = tuple(
        itertools.chain.from_iterable(n for i, n in enumerate(leaf_argnums2) if i in argnums_flat1)
    )

    def fun_flat(*flat: Any, **kwargs: Any) -> Any:
        return fun(*tree_unflatten(tree1, tree_unflatten(tree2, flat)), **kwargs)

    def reconstruct(i: int, grad_out: Any) -> Any:
        bufs, tree = tree_flatten(args_flat1[i])

        def rebuild(g: Any) -> Any:
            return tree_unflatten(tree, [g, *bufs[1:]])

        f = rebuild
        for _ in range(grad_out.ndim - bufs[0].ndim):
            f = vmap(f)
        return f(grad_out)

    def postprocess_gradients(grads_out: Any) -> Any:
        leaf_grads: list[Any] = [None] * tree1.num_leaves
        for i, g in zip(argnums_flat1, grads_out, strict=True):
            leaf_grads[i] = reconstruct(i, g)
        grad_tree = tuple(x for x in tree_unflatten(tree1, leaf_grads) if tree_leaves(x))
        return grad_tree[0] if len(grad_tree) == 1 else grad_tree

    return fun_flat, argnums_flat, args_flat, postprocess_gradients


def value_and_grad(
    fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False, **kwargs: Any
) -> Callable[..., tuple[Any, Any]]:
    """Sparse-aware `value_and_grad`: the gradient with respect to a sparse array is taken in
    the subspace of its sparsity pattern."""
    _value_and_grad(fun, argnums=argnums, has_aux=has_aux, **kwargs)  # JAX's argument checks

    @functools.wraps(fun)
    def value_and_grad_fun(*args: Any, **kw: Any) -> tuple[Any, Any]:
        fun_flat, argnums_flat, args_flat, post = flatten_fun_for_sparse_ad(fun, argnums, args)
        val, g = _value_and_grad(fun_flat, argnums=argnums_flat, has_aux=has_aux, **kwargs)(
            *args_flat, **kw
        )
        return val, post(g)

    return value_and_grad_fun


def _wrap(
    transform: Callable[..., Any],
    fun: Callable[..., Any],
    argnums: int | Sequence[int],
    has_aux: bool,
    kwargs: dict[str, Any],
) -> Callable[..., Any]:
    @functools.wraps(fun)
    def wrapped(*args: Any, **kw: Any) -> Any:
        fun_flat, argnums_flat, args_flat, post = flatten_fun_for_sparse_ad(fun, argnums, args)
        out = transform(fun_flat, argnums=argnums_flat, has_aux=has_aux, **kwargs)(*args_flat, **kw)
        if has_aux:
            return post(out[0]), out[1]
        return post(out)

    return wrapped


def grad(
    fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False, **kwargs: Any
) -> Callable[..., Any]:
    """Sparse-aware `grad`: the gradient with respect to a sparse array is taken in the
    subspace of its sparsity pattern."""
    _grad(fun, argnums=argnums, **kwargs)  # JAX's argument checks
    return _wrap(_grad, fun, argnums, has_aux, kwargs)


def jacfwd(
    fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False, **kwargs: Any
) -> Callable[..., Any]:
    """Sparse-aware `jacfwd` (dense outputs only)."""
    _jacfwd(fun, argnums=argnums, **kwargs)
    return _wrap(_jacfwd, fun, argnums, has_aux, kwargs)


def jacrev(
    fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False, **kwargs: Any
) -> Callable[..., Any]:
    """Sparse-aware `jacrev` (dense outputs only)."""
    _jacrev(fun, argnums=argnums, **kwargs)
    return _wrap(_jacrev, fun, argnums, has_aux, kwargs)


jacobian = jacrev

__all__ = ["grad", "jacfwd", "jacobian", "jacrev", "value_and_grad"]
