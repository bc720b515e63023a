"""Collectives that move data across a named axis: all_gather, psum_scatter (the
`reduce_scatter` primitive) and all_to_all (with pswapaxes), as JAX 0.10.2's: params,
printing, batching and transpose rules. The primitives and the named-axis helpers are
`_collectives`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lamina_core.interpreters import AxisData, BatchDim, batching_rules, deflinear
from lamina_core.ir import AbstractValue, ShapedArray, abstract_eval_rules, impl_rules
from lamina_core.lax import _checks as c
from lamina_core.lax._array_helpers import multiply
from lamina_core.lax._batching_common import shape_of
from lamina_core.lax._collectives import (
    _as_tuple,
    _axis_size,
    _canonical_groups,
    _canonicalize_axis,
    _check_axis_names,
    _named_only_impl,
    all_gather_p,
    all_to_all_p,
    reduce_scatter_p,
)
from lamina_core.lax._reductions import reduce_sum
from lamina_core.lax._shape import expand_dims, reshape, squeeze, transpose
from lamina_core.lax._structural import (
    broadcast,
    broadcast_in_dim,
)
from lamina_core.trace import insert_collective_pvary
from lamina_core.tree import tree_util

# --- all_gather --------------------------------------------------------------------------


def all_gather(
    x: Any,
    axis_name: Any,
    *,
    axis_index_groups: Any = None,
    axis: int = 0,
    tiled: bool = False,
    to: str = "varying",
) -> Any:
    """`x` (a pytree) from every index of the named axis, stacked at `axis` (concatenated
    along it when `tiled`)."""
    allowed = {"varying", "reduced", "invarying"}
    if to not in allowed:
        raise ValueError(
            "Got unexpected `to` value for `jax.lax.all_gather`. Allowed `to` values are: "
            f"{allowed}"
        )
    if to != "varying":
        raise NotImplementedError(f"all_gather(to={to!r}) is not supported by Lamina yet")
    names = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    if not names:
        return x
    groups = _canonical_groups(axis_index_groups)
    size = _axis_size(names, groups)

    def bind(leaf: Any) -> Any:
        ndim = len(shape_of(leaf))
        leaf = insert_collective_pvary(names, leaf)
        return all_gather_p.bind(
            leaf,
            all_gather_dimension=_canonicalize_axis(axis, ndim if tiled else ndim + 1),
            axis_name=names,
            axis_index_groups=groups,
            axis_size=size,
            tiled=tiled,
        )

    return tree_util.tree_map(bind, x)


@abstract_eval_rules.register(all_gather_p)
def _all_gather_abstract_eval(
    x: AbstractValue, *, all_gather_dimension: int, axis_name: Any, axis_index_groups: Any,
    axis_size: int, tiled: bool,
) -> ShapedArray:  # fmt: skip
    _check_axis_names(_as_tuple(axis_name), "all_gather")
    aval = c.array_aval("all_gather", x)
    shape = list(aval.shape)
    if tiled:
        shape[all_gather_dimension] *= axis_size
    else:
        shape.insert(all_gather_dimension, axis_size)
    return ShapedArray(tuple(shape), aval.dtype, aval.weak_type)


impl_rules.set(all_gather_p, _named_only_impl("all_gather"))


def _split_axis(axis: int, factor: int, x: Any) -> Any:
    shape = list(shape_of(x))
    assert shape[axis] % factor == 0, (shape[axis], factor)
    shape[axis : axis + 1] = [factor, shape[axis] // factor]
    return reshape(x, shape)


def _fold_axis(axis: int, x: Any) -> Any:
    shape = list(shape_of(x))
    shape[axis : axis + 2] = [shape[axis] * shape[axis + 1]]
    return reshape(x, shape)


def _past_batch_dim(dim: int, d: BatchDim, tiled: bool) -> tuple[int, BatchDim]:
    """For a gather or scatter along `dim` of an operand batched at `d` over another axis:
    the operand's `dim` and the result's batch dimension, as JAX's rules shift them."""
    if d is not None:
        if d <= dim:
            dim += 1
        elif not tiled:
            d += 1
    return dim, d


def _check_over_vmapped_axis(
    axis_data: AxisData, names: tuple[Any, ...], axis_index_groups: Any, axis_size: int
) -> None:
    """JAX's limits on a gather or scatter over the vmapped axis itself."""
    if axis_index_groups is not None:
        raise NotImplementedError("axis_index_groups not supported in vmap")
    assert axis_size == axis_data.size, "axis size doesn't match"
    if len(names) > 1:
        raise NotImplementedError("Please open a feature request!")


def _all_gather_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], *,
    all_gather_dimension: int, axis_name: Any, axis_index_groups: Any, axis_size: int,
    tiled: bool,
) -> tuple[Any, BatchDim]:  # fmt: skip
    names = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    (x,), (d,) = vals, dims
    frame = axis_data.name
    params = dict(axis_name=names, axis_index_groups=axis_index_groups, axis_size=axis_size,
                  tiled=tiled)  # fmt: skip
    if frame is None or frame not in names:
        dim, d = _past_batch_dim(all_gather_dimension, d, tiled)
        return all_gather_p.bind(x, all_gather_dimension=dim, **params), d
    _check_over_vmapped_axis(axis_data, names, axis_index_groups, axis_size)
    if d is None:
        shape = list(shape_of(x))
        shape.insert(all_gather_dimension, axis_size)
        kept = [i for i in range(len(shape)) if i != all_gather_dimension]
        y = broadcast_in_dim(x, shape, kept)
    else:
        y = _transpose_move(x, d, all_gather_dimension)
    if tiled:
        y = _fold_axis(all_gather_dimension, y)
    return y, None


def _transpose_move(x: Any, src: int, dst: int) -> Any:
    """JAX's `_moveaxis` of the collectives: always a `transpose`, even an identity one."""
    perm = [i for i in range(len(shape_of(x))) if i != src]
    perm.insert(dst, src)
    return transpose(x, perm)


batching_rules.set(all_gather_p, _all_gather_batch)


def _all_gather_transpose(
    ct: Any, x: Any, *, all_gather_dimension: int, axis_name: Any, axis_index_groups: Any,
    axis_size: int, tiled: bool,
) -> Any:  # fmt: skip
    return [
        psum_scatter(ct, axis_name, scatter_dimension=all_gather_dimension,
                     axis_index_groups=axis_index_groups, tiled=tiled)
    ]  # fmt: skip


deflinear(all_gather_p, _all_gather_transpose)


# --- psum_scatter (reduce_scatter) -------------------------------------------------------


def psum_scatter(
    x: Any,
    axis_name: Any,
    *,
    scatter_dimension: int = 0,
    axis_index_groups: Any = None,
    tiled: bool = False,
) -> Any:
    """The sum of `x` (a pytree) over the named axis, each index keeping its own part along
    `scatter_dimension` (a block of it when `tiled`)."""
    names = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    if not names:
        return x
    size = _axis_size(names, axis_index_groups)
    groups = _canonical_groups(axis_index_groups)
    return tree_util.tree_map(
        lambda leaf: reduce_scatter_p.bind(
            insert_collective_pvary(names, leaf), axis_name=names,
            scatter_dimension=scatter_dimension, axis_index_groups=groups, axis_size=size,
            tiled=tiled,
        ),
        x,
    )  # fmt: skip


@abstract_eval_rules.register(reduce_scatter_p)
def _reduce_scatter_abstract_eval(
    x: AbstractValue, *, axis_name: Any, scatter_dimension: int, axis_index_groups: Any,
    axis_size: int, tiled: bool,
) -> ShapedArray:  # fmt: skip
    _check_axis_names(_as_tuple(axis_name), "reduce_scatter")
    aval = c.array_aval("reduce_scatter", x)
    shape = list(aval.shape)
    n = aval.shape[scatter_dimension]
    if tiled:
        if n % axis_size != 0:
            raise ValueError(
                f"tiled reduce_scatter operand scatter dimension size {n} must be divisible "
                f"by shard_count {axis_size}"
            )
        shape[scatter_dimension] = n // axis_size
    else:
        if n != axis_size:
            raise ValueError(
                f"reduce_scatter operand scatter dimension size {n} must match shard count "
                f"{axis_size}"
            )
        del shape[scatter_dimension]
    return ShapedArray(tuple(shape), aval.dtype, aval.weak_type)


impl_rules.set(reduce_scatter_p, _named_only_impl("reduce_scatter"))


def _reduce_scatter_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], *, scatter_dimension: int,
    axis_name: Any, axis_index_groups: Any, axis_size: int, tiled: bool,
) -> tuple[Any, BatchDim]:  # fmt: skip
    names = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    (x,), (d,) = vals, dims
    frame = axis_data.name
    params = dict(axis_name=names, axis_index_groups=axis_index_groups, axis_size=axis_size,
                  tiled=tiled)  # fmt: skip
    if frame is None or frame not in names:
        dim, d = _past_batch_dim(scatter_dimension, d, tiled)
        return reduce_scatter_p.bind(x, scatter_dimension=dim, **params), d
    _check_over_vmapped_axis(axis_data, names, axis_index_groups, axis_size)
    y = multiply(x, axis_size) if d is None else reduce_sum(x, (d,))
    if tiled:
        y = _split_axis(scatter_dimension, axis_size, y)
    return y, scatter_dimension


batching_rules.set(reduce_scatter_p, _reduce_scatter_batch)


def _reduce_scatter_transpose(
    ct: Any, x: Any, *, axis_name: Any, scatter_dimension: int, axis_index_groups: Any,
    axis_size: int, tiled: bool,
) -> Any:  # fmt: skip
    return [
        all_gather(ct, axis_name, axis_index_groups=axis_index_groups, axis=scatter_dimension,
                   tiled=tiled)
    ]  # fmt: skip


deflinear(reduce_scatter_p, _reduce_scatter_transpose)


# --- all_to_all --------------------------------------------------------------------------


def all_to_all(
    x: Any,
    axis_name: Any,
    split_axis: int,
    concat_axis: int,
    *,
    axis_index_groups: Any = None,
    tiled: bool = False,
) -> Any:
    """Map axis `split_axis` of `x` (a pytree) over the named axis, and gather what the
    named axis mapped into a positional axis at `concat_axis`."""
    groups = _canonical_groups(axis_index_groups)

    def bind(leaf: Any) -> Any:
        split, concat = split_axis, concat_axis
        group_size = _axis_size(axis_name, groups)
        shape = shape_of(leaf)
        if tiled:
            if shape[split] % group_size != 0:
                raise ValueError(
                    f"The size of all_to_all split_axis ({shape[split]}) has to be divisible "
                    f"by the size of the named axis {axis_name} ({group_size})"
                )
        else:
            if group_size != shape[split]:
                raise ValueError(
                    "all_to_all requires the size of the mapped axis axis_name to equal "
                    f"x.shape[split_axis], but they are {group_size} and {shape[split]} "
                    "respectively."
                )
            if split < concat:
                concat += 1  # a position after the split axis is removed
                leaf = expand_dims(leaf, (concat,))
            elif split > concat:
                leaf = expand_dims(leaf, (concat,))
                split += 1
        leaf = insert_collective_pvary(axis_name, leaf)
        out = all_to_all_p.bind(
            leaf, split_axis=split, concat_axis=concat, axis_name=axis_name,
            axis_index_groups=groups, tiled=tiled,
        )  # fmt: skip
        if not tiled and split != concat:
            out = squeeze(out, (split,))
        return out

    return tree_util.tree_map(bind, x)


def pswapaxes(x: Any, axis_name: Any, axis: int, *, axis_index_groups: Any = None) -> Any:
    """Swap the named axis with positional axis `axis` of `x` (a pytree)."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


@abstract_eval_rules.register(all_to_all_p)
def _all_to_all_abstract_eval(
    x: AbstractValue, *, axis_name: Any, split_axis: int, concat_axis: int,
    axis_index_groups: Any, tiled: bool,
) -> ShapedArray:  # fmt: skip
    names = _as_tuple(axis_name)
    _check_axis_names(names, "all_to_all")
    aval = c.array_aval("all_to_all", x)
    shape = list(aval.shape)
    size = _axis_size(names) if axis_index_groups is None else len(axis_index_groups[0])
    assert shape[split_axis] % size == 0, (shape[split_axis], size)
    shape[split_axis] //= size
    shape[concat_axis] *= size
    return ShapedArray(tuple(shape), aval.dtype)


@impl_rules.register(all_to_all_p)
def _all_to_all_impl(x: Any, **params: Any) -> Any:
    raise RuntimeError("all_to_all must be used within a mapped context like vmap or shard_map.")


def _all_to_all_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], *, axis_name: Any,
    split_axis: int, concat_axis: int, axis_index_groups: Any, tiled: bool,
) -> tuple[Any, BatchDim]:  # fmt: skip
    if axis_index_groups is not None:
        raise NotImplementedError("Please open a feature request!")
    (x,), (d,) = vals, dims
    size, frame = axis_data.size, axis_data.name
    names = list(axis_name) if isinstance(axis_name, (list, tuple)) else [axis_name]
    params = dict(axis_name=axis_name, axis_index_groups=axis_index_groups, tiled=tiled)
    if frame is None or frame not in names:
        if d is None:
            out = all_to_all_p.bind(x, split_axis=split_axis, concat_axis=concat_axis, **params)
            return out, None
        out = all_to_all_p.bind(
            x, split_axis=split_axis + (d <= split_axis),
            concat_axis=concat_axis + (d <= concat_axis), **params,
        )  # fmt: skip
        return out, d
    if d is None:
        # JAX 0.10.2 broadcasts by the operand's whole shape plus the axis size here (its
        # `lax.broadcast` takes the sizes of new leading axes): kept, so programs match JAX's.
        x = broadcast(x, (size, *shape_of(x)))
        d = 0
    if len(names) > 1:
        return _all_to_all_of_several_names(
            x, d, axis_data, axis_name, split_axis, concat_axis, axis_index_groups, tiled
        )
    if split_axis == concat_axis:
        axis = split_axis + (d <= split_axis)
        before = d
        x = _split_axis(axis, size, x)
        d += axis <= d
        return _fold_axis(axis, _swap_axes(x, d, axis)), before
    gathered = _fold_axis(concat_axis, _transpose_move(x, d, concat_axis))
    return _split_axis(split_axis, size, gathered), split_axis


def _all_to_all_of_several_names(
    x: Any, d: int, axis_data: AxisData, axis_name: Any, split_axis: int, concat_axis: int,
    axis_index_groups: Any, tiled: bool,
) -> tuple[Any, BatchDim]:  # fmt: skip
    """all_to_all over this vmap's name and others: the names before it (major) and after it
    (minor) exchange chunks in three leading axes [major, this, minor], folded at the end."""
    size = axis_data.size
    pos = list(axis_name).index(axis_data.name)
    major, minor = axis_name[:pos], axis_name[pos + 1 :]
    params = dict(axis_index_groups=axis_index_groups, tiled=tiled)
    x = expand_dims(_transpose_move(x, d, 0), (0, 2))
    split_axis += 3
    concat_axis += 3
    if major:
        x = all_to_all_p.bind(x, axis_name=major, split_axis=split_axis, concat_axis=0, **params)
    x = _split_axis(split_axis, size, x)
    new_d = split_axis
    concat_axis += split_axis <= concat_axis
    split_axis += 1
    if minor:
        x = all_to_all_p.bind(x, axis_name=minor, split_axis=split_axis, concat_axis=2, **params)
    x = _fold_axis(0, _fold_axis(0, x))
    concat_axis -= 2
    new_d -= 2
    x = _fold_axis(concat_axis - 1, _transpose_move(x, 0, concat_axis - 1))
    return x, new_d - 1


def _swap_axes(x: Any, a: int, b: int) -> Any:
    """JAX's `util.moveaxis(x, (a, b), (b, a))`: the two axes exchanged (`x` if a == b)."""
    if a == b:
        return x
    ndim = len(shape_of(x))
    perm = [i for i in range(ndim) if i not in (a, b)]
    for dst, src in sorted([(b, a), (a, b)]):
        perm.insert(dst, src)
    return transpose(x, perm)


batching_rules.set(all_to_all_p, _all_to_all_batch)


def _all_to_all_transpose(
    ct: Any, x: Any, *, axis_name: Any, split_axis: int, concat_axis: int,
    axis_index_groups: Any, tiled: bool,
) -> Any:  # fmt: skip
    return [
        all_to_all(ct, axis_name, concat_axis, split_axis, axis_index_groups=axis_index_groups,
                   tiled=tiled)
    ]  # fmt: skip


deflinear(all_to_all_p, _all_to_all_transpose)


__all__ = ["all_gather", "all_to_all", "psum_scatter", "pswapaxes"]
