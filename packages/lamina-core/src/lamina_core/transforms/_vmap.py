"""`vmap`, as JAX's: in/out axes as pytree prefixes, `axis_size`, `axis_name`, JAX's errors.

This module flattens pytrees, checks the arguments with JAX's messages, works out the size
of the mapped axis, and runs the batching interpreter (`interpreters.batching`).
"""

from __future__ import annotations

import collections
import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lamina_core.interpreters import (
    AxisData,
    MappingSpec,
    SpecMatchError,
    batch_flat,
    is_vmappable,
    spec_types,
)
from lamina_core.ir import DebugInfo, transform_name_stack
from lamina_core.trace import (
    Tracer,
    api_boundary,
    by_reference_types,
    canonical_value,
    check_no_aliased_args,
    typeof,
)
from lamina_core.transforms._make_jaxpr import argument_names, func_src_info, wraps_as_jax
from lamina_core.tree import keystr, tree_util


def _is_axis_leaf(x: Any) -> bool:
    return x is None


def _check_axes_leaves(name: str, axes: Any) -> None:
    leaves = tree_util.tree_leaves(axes, is_leaf=_is_axis_leaf)
    if not all(
        type(leaf) is int
        or leaf is None
        or isinstance(leaf, MappingSpec)
        or type(leaf) in spec_types  # a vmappable container's spec
        for leaf in leaves
    ):
        raise TypeError(
            f"vmap {name} must be an int, None, or (nested) container with those types as "
            f"leaves, but got {axes}."
        )


class _Leaf:
    def __repr__(self) -> str:
        return "pytree leaf"


def flatten_axes(name: str, treedef: Any, axis_tree: Any, *, kws: bool = False) -> list[Any]:
    """One axis spec per leaf of `treedef`, from `axis_tree`, a pytree prefix of it whose
    leaves are ints or None (JAX's `flatten_axes`)."""
    try:
        return list(_flatten_axes_cached(name, treedef, axis_tree, kws))
    except TypeError:  # an unhashable spec (a dict): worked out each time
        return _flatten_axes(name, treedef, axis_tree, kws)


@functools.lru_cache(maxsize=512)
def _flatten_axes_cached(name: str, treedef: Any, axis_tree: Any, kws: bool) -> tuple[Any, ...]:
    # A vmapped function is usually called with the same structure again and again.
    return tuple(_flatten_axes(name, treedef, axis_tree, kws))


def _flatten_axes(name: str, treedef: Any, axis_tree: Any, kws: bool) -> list[Any]:
    dummy = tree_util.tree_unflatten(treedef, [_Leaf() for _ in range(treedef.num_leaves)])
    try:
        full = tree_util.tree_broadcast(axis_tree, dummy, is_leaf=_is_axis_leaf)
    except ValueError as e:
        if kws:
            axis_tree = axis_tree[0]
        raise ValueError(
            f"{name} specification must be a tree prefix of the corresponding value, got "
            f"specification {axis_tree} for value tree "
            f"{str(treedef).replace('PyTreeSpec(', 'PyTreeDef(', 1)}.\n  Mismatch details: {e}"
        ) from None
    # One axis per leaf of the value: walk the value's structure, so that a `None` node of the
    # value (no leaves) contributes nothing, while an axis `None` at a leaf is kept.
    axes: list[Any] = []
    tree_util.tree_map(lambda _, ax: axes.append(ax), dummy, full)
    assert len(axes) == treedef.num_leaves
    return axes


def _canonical(x: Any) -> Any:
    if isinstance(x, Tracer) or hasattr(x, "aval"):
        return x
    return canonical_value(x)[0]


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(x.shape) if isinstance(x, Tracer) else np.shape(x)


def _mapped_axis_size(
    fun: Callable[..., Any],
    in_tree: Any,
    vals: Sequence[Any],
    dims: Sequence[Any],
    axis_size: int | None,
) -> int:
    if not vals:
        if axis_size is not None:
            return axis_size
        args, kwargs = tree_util.tree_unflatten(in_tree, vals)
        raise ValueError(
            "vmap wrapped function must be passed at least one argument containing an array or "
            f"axis_size must be specified, got empty *args={args} and **kwargs={kwargs}"
        )
    sizes: list[int | None] = []
    for x, d in zip(vals, dims, strict=True):
        if d is None or isinstance(d, MappingSpec) or type(d) is not int:
            # A hi type's or a vmappable container's spec does not say its size: JAX asks
            # for it (as `axis_size` or another argument).
            sizes.append(None)
            continue
        shape = _shape(x)
        try:
            sizes.append(shape[d])
        except IndexError:
            if is_vmappable(x):  # a container without the axis in its shape
                sizes.append(None)
                continue
            min_rank = d + 1 if d >= 0 else -d
            raise ValueError(
                f"vmap was requested to map its argument along axis {d}, which implies that its "
                f"rank should be at least {min_rank}, but is only {len(shape)} (its shape is "
                f"{shape})"
            ) from None
    found = [s for s in sizes if s is not None]
    if axis_size is not None:
        found.append(axis_size)
    distinct = set(found)
    if len(distinct) == 1:
        return found[0]
    if not distinct:
        raise ValueError(
            "vmap must have at least one non-None value in in_axes or axis_size must be specified"
        )
    raise ValueError(_inconsistent_sizes(fun, in_tree, vals, dims, sizes, axis_size))


def _inconsistent_sizes(
    fun: Callable[..., Any],
    in_tree: Any,
    vals: Sequence[Any],
    dims: Sequence[Any],
    sizes: Sequence[int | None],
    axis_size: int | None,
) -> str:
    args, kwargs = tree_util.tree_unflatten(in_tree, vals)
    try:
        params: list[str] | None = list(
            inspect.signature(fun).bind(*args, **kwargs).signature.parameters
        )
    except (TypeError, ValueError):
        params = None

    def arg_name(path: tuple[Any, ...]) -> str:
        i = path[0].idx
        if params is None or i >= len(params):
            return f"args{keystr(path)}"
        return f"argument {params[i]}{keystr(path[1:])}"

    def type_of(x: Any) -> str:
        try:
            return str(typeof(x).str_short(False))
        except TypeError:
            return "unknown"

    paths = [
        f"{arg_name(p)} of type {type_of(x)}" for p, x in tree_util.tree_leaves_with_path(args)
    ] + [
        f"kwargs{keystr(p)} of type {type_of(x)}"
        for p, x in tree_util.tree_leaves_with_path(kwargs)
    ]
    counts = collections.Counter(s for s in sizes if s is not None).most_common()
    lines = ["vmap got inconsistent sizes for array axes to be mapped:\n"]
    if axis_size is not None:
        lines.append(f"  * the `axis_size` argument was {axis_size};\n")
    for k, (size, count) in enumerate(counts):
        i = sizes.index(size)
        where = f"axis {dims[i]} of {paths[i]}"
        if count == 1:
            lines.append(f"  * one axis had size {size}: {where};\n")
        elif k == 0:
            lines.append(f"  * most axes ({count} of them) had size {size}, e.g. {where};\n")
        else:
            lines.append(f"  * some axes ({count} of them) had size {size}, e.g. {where};\n")
    return "".join(lines)[:-2]


def _check_no_aliased_refs(
    fun: Callable[..., Any],
    args: Sequence[Any],
    kwargs: dict[str, Any],
    leaves: Sequence[Any],
    dims: Sequence[Any],
) -> None:
    """One Ref mapped at two arguments is an error, as under `jit` (unmapped ones are not
    checked, as in JAX)."""
    avals = [
        typeof(x)
        if d is not None and (type(x) in by_reference_types or isinstance(x, Tracer))
        else None
        for x, d in zip(leaves, dims, strict=True)
    ]
    if sum(a is not None and a.mutable for a in avals) < 2:
        return
    debug = DebugInfo("vmap", func_src_info(fun), argument_names(fun, args, kwargs, set()))
    check_no_aliased_args(debug, avals, leaves)


def vmap(
    fun: Callable[..., Any],
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_name: Any = None,
    axis_size: int | None = None,
    spmd_axis_name: Any = None,
    sum_match: bool = False,
) -> Callable[..., Any]:
    """`fun` mapped over an axis of its arguments: one program for the whole batch; with
    `sum_match`, an output that is mapped where `out_axes` says None is summed over the batch."""
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)  # lists and tuples are interchangeable here, as in JAX
    if not (
        in_axes is None
        or type(in_axes) in (int, tuple, dict, *spec_types)
        or isinstance(in_axes, MappingSpec)
    ):
        raise TypeError(
            "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
            f"positional arguments passed to the function, but got {in_axes}."
        )
    _check_axes_leaves("in_axes", in_axes)
    _check_axes_leaves("out_axes", out_axes)
    if spmd_axis_name is not None and not isinstance(spmd_axis_name, tuple):
        spmd_axis_name = (spmd_axis_name,)

    @api_boundary
    @wraps_as_jax(fun)
    def vmap_f(*args: Any, **kwargs: Any) -> Any:
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(
                "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                "positional arguments passed to the function, but got "
                f"len(in_axes)={len(in_axes)}, len(args)={len(args)}"
            )
        # Registered vmappable containers are leaves: their own `to_elt` takes them apart.
        leaves, in_tree = tree_util.tree_flatten((args, kwargs), is_leaf=is_vmappable)
        dims = flatten_axes("vmap in_axes", in_tree, (in_axes, 0), kws=True)
        _check_no_aliased_refs(fun, args, kwargs, leaves, dims)
        size = _mapped_axis_size(fun, in_tree, leaves, dims, axis_size)
        leaves = [x if is_vmappable(x) else _canonical(x) for x in leaves]
        dims = [
            d if type(d) is not int or d >= 0 or is_vmappable(x) else d + len(_shape(x))
            for x, d in zip(leaves, dims, strict=True)
        ]
        out_trees: list[Any] = []

        def flat(*flat_args: Any) -> list[Any]:
            a, k = tree_util.tree_unflatten(in_tree, flat_args)
            out_leaves, out_tree = tree_util.tree_flatten(fun(*a, **k), is_leaf=is_vmappable)
            out_trees.append(out_tree)
            return out_leaves

        def out_dims(n: int) -> list[Any]:
            return flatten_axes("vmap out_axes", out_trees[0], out_axes)

        axis_data = AxisData(axis_name, size, spmd_axis_name)
        try:
            with transform_name_stack("vmap"):
                outs, _ = batch_flat(flat, axis_data, leaves, dims, out_dims, sum_match=sum_match)
        except SpecMatchError as e:
            if axis_name is not None:
                raise ValueError(
                    f"vmap has mapped output (axis_name={axis_name}) but out_axes is {e.dst}"
                ) from None
            full = tree_util.tree_unflatten(out_trees[0], out_dims(0))
            paths = tree_util.tree_flatten_with_path(full, is_leaf=lambda x: x is None)[0]
            raise ValueError(
                f"at vmap out_axes{keystr(paths[e.leaf][0])}, got axis spec {e.dst} but output "
                f"was batched on axis {e.src}"
            ) from None
        return tree_util.tree_unflatten(out_trees[0], outs)

    return vmap_f


__all__ = ["flatten_axes", "vmap"]
