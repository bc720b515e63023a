"""Dense Jacobians, as JAX's: `jacfwd`, `jacrev` (`jacobian`), `hessian`.

`jacfwd` pushes every vector of the standard basis forward at once (`vmap` of `jvp`);
`jacrev` pulls every basis vector back through one linearization (`vmap` of the pullback).
The basis is built as JAX builds it (an identity matrix `split` into one block per
argument leaf, each reshaped and converted to its leaf's type), and the results are cut
into blocks the same way, so the staged programs print as JAX's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lamina_core.ir import ShapedArray, dtypes
from lamina_core.lax import _convert_element_type, convert_element_type_p
from lamina_core.numpy import eye, reshape, split
from lamina_core.trace import Tracer, canonical_value, typeof
from lamina_core.transforms import (
    _argnums,
    _check_callable,
    _check_input_dtype,
    _check_output_dtype,
    fix_other_args,
    jvp,
    vjp,
    vmap,
    wraps_as_jax,
)
from lamina_core.tree import tree_util


def _argnums_partial(
    fun: Callable[..., Any],
    nums: int | tuple[int, ...],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """`fun` of the arguments at `nums` only (the others fixed), and those arguments."""
    wanted = (nums,) if isinstance(nums, int) else nums
    positions = []
    for i in wanted:
        if not -len(args) <= i < len(args):
            raise ValueError(
                "Positional argument indices, e.g. for `static_argnums`, must have value "
                "greater than or equal to -len(args) and less than len(args), but got value "
                f"{i} for len(args) == {len(args)}."
            )
        positions.append(i % len(args))
    return fix_other_args(fun, positions, args, kwargs)


def _as_value(x: Any) -> Any:
    return x if isinstance(x, Tracer) or hasattr(x, "aval") else canonical_value(x)[0]


# --- the standard basis and its inverse ----------------------------------------------------


def _is_weak(x: Any) -> bool:
    aval = typeof(x)
    return bool(getattr(aval, "weak_type", False))


def _downcast(x: Any, example: Any, staged: bool) -> Any:
    """`x` converted to `example`'s dtype and weak type (the real part of a complex `x` for
    a real `example`). With `staged`, the conversion is recorded even when it changes
    nothing: JAX's basis asks for a sharding no value has, so its conversions always stay."""
    ex_aval = typeof(example)
    dtype = ex_aval.dtype  # type: ignore[attr-defined]  # arrays
    if typeof(x).dtype.kind == "c" and dtype.kind != "c":  # type: ignore[attr-defined]
        x = x.real
    if staged:
        return convert_element_type_p.bind(
            x, new_dtype=dtype, weak_type=_is_weak(example), sharding=None
        )
    return _convert_element_type(x, dtype, _is_weak(example))


def _unravel(pytree: Any, axis: int, example: Any, arr: Any, staged: bool = False) -> Any:
    """`arr` cut along `axis` into one block per leaf of `pytree`, each block reshaped to hold
    its leaf's shape there and converted to `example`'s type (to its leaf's if None)."""
    leaves, treedef = tree_util.tree_flatten(pytree)
    shape = tuple(arr.shape)
    shapes = [shape[:axis] + np.shape(leaf) + shape[axis + 1 :] for leaf in leaves]
    parts = split(arr, np.cumsum([np.size(leaf) for leaf in leaves[:-1]]), axis)
    blocks = [
        _downcast(reshape(part, s), leaf if example is None else example, staged)
        for part, s, leaf in zip(parts, shapes, leaves, strict=True)
    ]
    return tree_util.tree_unflatten(treedef, blocks)


def _leaf_size(x: Any) -> int:
    return int(np.prod(typeof(x).shape))  # type: ignore[attr-defined]  # arrays


def _std_basis(pytree: Any) -> Any:
    """One basis vector per scalar of `pytree`'s leaves, stacked along a leading axis."""
    leaves = tree_util.tree_leaves(pytree)
    n = sum(_leaf_size(x) for x in leaves)
    dtype = dtypes.result_type(*leaves)
    return _unravel(pytree, 1, None, eye(n, dtype=dtype), staged=True)


# --- dtype checks ---------------------------------------------------------------------------


def _check_input_dtype_jacfwd(holomorphic: bool, x: Any) -> None:
    aval = typeof(x)
    if not isinstance(aval, ShapedArray):
        return
    if holomorphic:
        if aval.dtype.kind != "c":
            raise TypeError(
                "jacfwd with holomorphic=True requires inputs with complex dtype, but got "
                f"{aval.dtype.name}."
            )
    elif not dtypes.issubdtype(aval.dtype, np.floating):
        raise TypeError(
            "jacfwd requires real-valued inputs (input dtype that is a sub-dtype of "
            f"np.floating), but got {aval.dtype.name}. For holomorphic differentiation, pass "
            "holomorphic=True. For differentiation of non-holomorphic functions involving "
            "complex inputs or integer inputs, use jax.jvp directly."
        )


def _check_output_dtype_jacfwd(holomorphic: bool, x: Any) -> None:
    if holomorphic and typeof(x).dtype.kind != "c":  # type: ignore[attr-defined]  # arrays
        raise TypeError(
            "jacfwd with holomorphic=True requires outputs with complex dtype, but got "
            f"{typeof(x).dtype.name}."  # type: ignore[attr-defined]  # arrays
        )


# --- the API ----------------------------------------------------------------------------------


def jacfwd(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable[..., Any]:
    """The Jacobian of `fun` with respect to `argnums`, column by column (forward mode)."""
    _check_callable(fun)
    nums = _argnums(argnums)

    @wraps_as_jax(fun)
    def jacfun(*args: Any, **kwargs: Any) -> Any:
        f_partial, dyn_args = _argnums_partial(fun, nums, args, kwargs)
        dyn_args = tree_util.tree_map(_as_value, dyn_args)
        tree_util.tree_map(functools.partial(_check_input_dtype_jacfwd, holomorphic), dyn_args)

        def pushfwd(tangents: Any) -> Any:
            return jvp(f_partial, dyn_args, tangents, has_aux=has_aux)

        basis = _std_basis(dyn_args)
        aux = None
        if has_aux:
            y, jac, aux = vmap(pushfwd, out_axes=(None, -1, None))(basis)
        else:
            y, jac = vmap(pushfwd, out_axes=(None, -1))(basis)
        tree_util.tree_map(functools.partial(_check_output_dtype_jacfwd, holomorphic), y)
        example = dyn_args[0] if isinstance(nums, int) else dyn_args

        def unravel(y_leaf: Any, arr: Any) -> Any:
            return _unravel(example, -1 % len(arr.shape), y_leaf, arr)

        jac_tree = tree_util.tree_map(unravel, y, jac)
        return (jac_tree, aux) if has_aux else jac_tree

    return jacfun


def jacrev(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[..., Any]:
    """The Jacobian of `fun` with respect to `argnums`, row by row (reverse mode)."""
    _check_callable(fun)
    nums = _argnums(argnums)

    @wraps_as_jax(fun)
    def jacfun(*args: Any, **kwargs: Any) -> Any:
        f_partial, dyn_args = _argnums_partial(fun, nums, args, kwargs)
        for leaf in tree_util.tree_leaves(dyn_args):
            _check_input_dtype("jacrev", holomorphic, allow_int, leaf)
        aux = None
        if has_aux:
            y, pullback, aux = vjp(f_partial, *dyn_args, has_aux=True)
        else:
            y, pullback = vjp(f_partial, *dyn_args)
        tree_util.tree_map(functools.partial(_check_output_dtype, "jacrev", holomorphic), y)
        jac = vmap(pullback)(_std_basis(y))
        jac = jac[0] if isinstance(nums, int) else jac
        example = dyn_args[0] if isinstance(nums, int) else dyn_args
        example = tree_util.tree_map(_as_value, example)

        def unravel(x_leaf: Any, arr: Any) -> Any:
            return _unravel(y, 0, x_leaf, arr)

        jac_tree = tree_util.tree_map(unravel, example, jac)
        jac_tree = tree_util.tree_transpose(
            tree_util.tree_structure(example), tree_util.tree_structure(y), jac_tree
        )
        return (jac_tree, aux) if has_aux else jac_tree

    return jacfun


def jacobian(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[..., Any]:
    """`jacrev`."""
    return jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic, allow_int=allow_int)


def hessian(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable[..., Any]:
    """The Hessian of `fun` as a dense array: `jacfwd(jacrev(fun))`."""
    return jacfwd(
        jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic),
        argnums,
        has_aux=has_aux,
        holomorphic=holomorphic,
    )


__all__ = ["hessian", "jacfwd", "jacobian", "jacrev"]
