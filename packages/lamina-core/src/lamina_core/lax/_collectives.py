"""Collectives over named axes: psum, pmax, pmin (and pmean over psum), axis_index, ppermute,
pbroadcast, all_gather, psum_scatter (the `reduce_scatter` primitive) and all_to_all.

A collective names the axes it acts over; a named axis is bound by an enclosing
`vmap(..., axis_name=...)` while its function runs. The reductions also take positional
(integer) axes: under `vmap` the named axis of a reduction turns into the position of the
mapped axis, so what remains in a batched program is a `psum[axes=(0,)]`, a plain sum. The
batching rules say what each collective means over the mapped axis, with ordinary lax ops;
names of enclosing vmaps are left in the params for the enclosing batch trace. Params,
printing, rules and error messages are JAX 0.10.2's. The functions and rules of the
collectives that move data (all_gather, psum_scatter, all_to_all) are in
`_collectives_layout`; every primitive is declared here.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from lamina_core.interpreters import (
    AxisData,
    BatchDim,
    Zero,
    axis_frame,
    batching_rules,
    bound_axis_names,
    deflinear,
    is_undefined,
    needs_axis_rule,
    not_differentiable,
)
from lamina_core.ir import AbstractValue, Primitive, ShapedArray, abstract_eval_rules, impl_rules
from lamina_core.lax import _checks as c
from lamina_core.lax._array_helpers import multiply, take, true_divide
from lamina_core.lax._batching_common import moveaxis, shape_of
from lamina_core.lax._elementwise import eq
from lamina_core.lax._reductions import reduce_max_p, reduce_min_p, reduce_sum, reduce_sum_p
from lamina_core.lax._selection import select
from lamina_core.lax._shape import asarray, iota
from lamina_core.lax._structural import (
    _convert_element_type,
    broadcast,
    broadcast_in_dim_p,
    convert_element_type,
)
from lamina_core.lax._types import Array
from lamina_core.trace import (
    Tracer,
    check_vma_enabled,
    insert_collective_pvary,
    pvary,
    pvary_like,
    typeof,
)
from lamina_core.tree import tree_util

psum_p: Final = Primitive("psum")
pmax_p: Final = Primitive("pmax")
pmin_p: Final = Primitive("pmin")
ppermute_p: Final = Primitive("ppermute")
pbroadcast_p: Final = Primitive("pbroadcast")
all_gather_p: Final = Primitive("all_gather")
reduce_scatter_p: Final = Primitive("reduce_scatter")
all_to_all_p: Final = Primitive("all_to_all")
axis_index_p: Final = Primitive("axis_index")


# --- named axes --------------------------------------------------------------------------


def _is_positional(axis: Any) -> bool:
    return isinstance(axis, int)


def _as_tuple(axis_name: Any) -> tuple[Any, ...]:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _is_bound(name: Any) -> bool:
    # An unnamed vmap binds no name: `None` is never a bound axis.
    return name is not None and name in bound_axis_names()


def _frame_size(name: Any) -> int:
    """The size of the innermost axis bound as `name` (JAX's axis environment error if none)."""
    if _is_bound(name):
        return axis_frame(name).size
    raise NameError(f"unbound axis name: {name}")


def _check_axis_names(axes: Sequence[Any], api_name: str) -> None:
    for name in axes:
        if not _is_positional(name) and not _is_bound(name):
            raise NameError(
                f"Found an unbound axis name: {name}. To fix this, please call {api_name} "
                "under `jax.shard_map`."
            )


def _canonical_groups(groups: Any) -> tuple[tuple[int, ...], ...] | None:
    if groups is None:
        return None
    return tuple(tuple(g) for g in groups)


def _validate_reduce_groups(groups: Any) -> None:
    if groups is None:
        return
    space = set(range(sum(len(g) for g in groups)))
    if {i for g in groups for i in g} != space:
        raise ValueError("axis_index_groups must cover all indices exactly once")


def _dtype_of(x: Any) -> np.dtype:
    return c.array_aval("psum", typeof(x)).dtype


def _is_python_scalar(x: Any) -> bool:
    return type(x) in (bool, int, float, complex)


def _times_size(x: Any, size: int) -> Any:
    """`x` times `size` as JAX computes it: `x` times a strong scalar of its dtype."""
    return multiply(np.array(size, dtype=_dtype_of(x)), x)


def _canonicalize_axis(axis: int, ndim: int) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis + ndim if axis < 0 else axis


# --- psum, pmax, pmin, pmean -------------------------------------------------------------


def _reduction_params_check(axes: tuple[Any, ...], groups: Any) -> Any:
    if any(_is_positional(a) for a in axes) and groups is not None:
        raise ValueError("axis_index_groups only supported for sums over just named axes")
    _validate_reduce_groups(groups)
    return _canonical_groups(groups)


def _psum_leaf(x: Any, axes: tuple[Any, ...], groups: Any) -> Any:
    groups = _reduction_params_check(axes, groups)
    if _dtype_of(x) == np.bool_:
        x = convert_element_type(x, np.int32)
    if isinstance(x, Tracer):
        if check_vma_enabled():
            # A checked body sums into an invariant value: varying -> invariant. Imported here
            # as `_collectives_vma` imports this module's primitives at its top.
            from lamina_core.lax._collectives_vma import psum_invariant_p

            if groups is not None:
                raise NotImplementedError
            have: frozenset[Any] = getattr(typeof(x), "vma", frozenset())
            x = pvary(x, tuple(a for a in axes if a not in have))
            return psum_invariant_p.bind(x, axes=axes)
        return psum_p.bind(x, axes=axes, axis_index_groups=groups)
    # A value no trace follows is the same at every index of the named axes: its sum over
    # them is the value times their size, computed right away.
    named = [a for a in axes if not _is_positional(a)]
    positional = [a for a in axes if _is_positional(a)]
    size = len(groups[0]) if groups is not None else math.prod(_frame_size(n) for n in named)
    if positional:
        x = reduce_sum(x, [_canonicalize_axis(a, len(shape_of(x))) for a in positional])
    if _is_python_scalar(x):
        return type(x)(size) * x
    return _times_size(x, size)


def psum(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The sum of `x` (a pytree of arrays) over the named axes `axis_name`."""
    axes = _as_tuple(axis_name)
    if not axes:
        return x
    return tree_util.tree_map(lambda leaf: _psum_leaf(leaf, axes, axis_index_groups), x)


def _axis_size(axis_name: Any, axis_index_groups: Any = None) -> int:
    size: int = psum(1, axis_name, axis_index_groups=_canonical_groups(axis_index_groups))
    return size


def axis_size(axis_name: Any) -> int:
    """The size of the named axis `axis_name` (of the product of a tuple of them)."""
    return _axis_size(axis_name)


def pmean(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The mean of `x` (a pytree of arrays) over the named axes `axis_name`."""
    total = psum(x, axis_name, axis_index_groups=axis_index_groups)
    n = _axis_size(axis_name, axis_index_groups)
    return tree_util.tree_map(lambda v: true_divide(v, n), total)


def _extremum(prim: Primitive, x: Any, axis_name: Any, axis_index_groups: Any) -> Any:
    axes = _as_tuple(axis_name)
    groups = _reduction_params_check(axes, axis_index_groups)
    return tree_util.tree_map(
        lambda leaf: prim.bind(
            insert_collective_pvary(axes, leaf), axes=axes, axis_index_groups=groups
        ),
        x,
    )


def pmax(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The maximum of `x` (a pytree of arrays) over the named axes `axis_name`."""
    return _extremum(pmax_p, x, axis_name, axis_index_groups)


def pmin(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The minimum of `x` (a pytree of arrays) over the named axes `axis_name`."""
    return _extremum(pmin_p, x, axis_name, axis_index_groups)


def _allreduce_abstract_eval(
    x: AbstractValue, *, axes: tuple[Any, ...], axis_index_groups: Any
) -> ShapedArray:
    _check_axis_names(axes, "psum")
    aval = c.array_aval("psum", x)
    positional = [a for a in axes if _is_positional(a)]
    if axis_index_groups is not None and positional:
        raise ValueError(
            f"axis_index_groups can only be used with reductions over named axes, but got: {axes}"
        )
    if len(set(positional)) != len(positional):
        raise ValueError(f"duplicate value in 'axes' of reduction: {tuple(positional)}")
    if not all(0 <= a < aval.ndim for a in positional):
        raise ValueError(
            f"reduction axes {tuple(positional)} contains out-of-bounds indices for {aval}."
        )
    shape = tuple(d for i, d in enumerate(aval.shape) if i not in positional)
    return ShapedArray(shape, aval.dtype)


def _allreduce_impl(reducer: Any) -> Any:
    def impl(x: Any, *, axes: tuple[Any, ...], axis_index_groups: Any) -> Any:
        _check_axis_names(axes, "psum")
        if not all(_is_positional(a) for a in axes):
            raise NotImplementedError("collectives over named axes run under vmap only")
        return reducer(np.asarray(x), tuple(axes))

    return impl


def _reference(prim: Primitive, **extra: Any) -> Any:
    def reduce(x: np.ndarray, axes: tuple[int, ...]) -> Any:
        return impl_rules[prim](x, axes=axes, **extra)

    return reduce


for _prim, _ref in (
    (psum_p, _reference(reduce_sum_p, out_sharding=None)),
    (pmax_p, _reference(reduce_max_p)),
    (pmin_p, _reference(reduce_min_p)),
):
    abstract_eval_rules.set(_prim, _allreduce_abstract_eval)
    impl_rules.set(_prim, _allreduce_impl(_ref))


def _bind_reduction(prim: Primitive, x: Any, axes: tuple[Any, ...], groups: Any) -> Any:
    return prim.bind(x, axes=axes, axis_index_groups=groups)


def _constant_reduction(
    prim: Primitive, axis_data: AxisData, x: Any, axes: tuple[Any, ...], groups: Any
) -> tuple[Any, BatchDim]:
    if groups:
        raise NotImplementedError
    rest = tuple(n for n in axes if n != axis_data.name)
    if rest:
        x = _bind_reduction(prim, x, rest, groups)
    if prim is psum_p:
        return _times_size(x, axis_data.size), None
    return x, None


def _positional_reduction(
    prim: Primitive, x: Any, d: int, axes: tuple[Any, ...], groups: Any, frame: Any
) -> Any:
    """`prim` of `x` (mapped at `d`), its mapped axis moved to the front, over `axes` with
    positional axes shifted past it and the name `frame` (if present) replaced by it."""
    if groups is not None:
        raise NotImplementedError(
            "axis_index_groups not supported in vmap collectives. Please open a feature request!"
        )
    if d != 0:
        x = moveaxis(x, d, 0)
    new_axes = tuple(
        a + 1 if _is_positional(a) else (0 if a == frame and frame is not None else a) for a in axes
    )
    return _bind_reduction(prim, x, new_axes, None)


def _reduction_collective_rule(prim: Primitive) -> Any:
    def rule(
        axis_data: AxisData,
        vals: Sequence[Any],
        dims: Sequence[BatchDim],
        *,
        axes: tuple[Any, ...],
        axis_index_groups: Any,
    ) -> tuple[Any, BatchDim]:
        (x,), (d,) = vals, dims
        mine = axis_data.name is not None and axis_data.name in axes
        if d is None:
            if mine:
                return _constant_reduction(prim, axis_data, x, axes, axis_index_groups)
            return _bind_reduction(prim, x, axes, axis_index_groups), None
        if not mine:
            if not any(_is_positional(a) for a in axes):
                return _bind_reduction(prim, x, axes, axis_index_groups), d
            return _positional_reduction(prim, x, d, axes, axis_index_groups, None), 0
        return _positional_reduction(prim, x, d, axes, axis_index_groups, axis_data.name), None

    return rule


for _prim in (psum_p, pmax_p, pmin_p):
    batching_rules.set(_prim, _reduction_collective_rule(_prim))
# JAX gives pmax and pmin no derivative; axis_index has no operands.
for _prim in (pmax_p, pmin_p, axis_index_p):
    not_differentiable(_prim)


def _psum_transpose(ct: Any, x: Any, *, axes: tuple[Any, ...], axis_index_groups: Any) -> Any:
    named = tuple(a for a in axes if not _is_positional(a))
    positional = [a for a in axes if _is_positional(a)]
    if positional:
        assert is_undefined(x)
        if type(ct) is Zero:
            ct = Zero(x.aval)
        else:
            shape = x.aval.shape
            dims = tuple(np.delete(np.arange(len(shape)), positional))
            ct = broadcast_in_dim_p.bind(ct, shape=shape, broadcast_dimensions=dims, sharding=None)
    # psum is a sum followed by a broadcast over the named axes: its transpose sums again.
    return [psum_p.bind(ct, axes=named, axis_index_groups=axis_index_groups)]


deflinear(psum_p, _psum_transpose)


# --- axis_index --------------------------------------------------------------------------


def axis_index(axis_name: Any) -> Array:
    """This element's index along the named axis `axis_name` (row-major over a tuple)."""
    if not isinstance(axis_name, (tuple, list)):
        out: Array = axis_index_p.bind(axis_name=axis_name)
        return out
    inner = 1
    index: Any = asarray(0)
    for name in reversed(axis_name):
        index = index + axis_index(name) * inner
        inner *= axis_size(name)
    out = index
    return out


@abstract_eval_rules.register(axis_index_p)
def _axis_index_abstract_eval(*, axis_name: Any) -> ShapedArray:
    names = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    _check_axis_names(names, "axis_index")
    # In a checked shard_map body each device's index differs: it varies over the axes.
    vma = frozenset(names) if check_vma_enabled() else frozenset()
    return ShapedArray((), np.dtype(np.int32), vma=vma)


@impl_rules.register(axis_index_p)
def _axis_index_impl(*, axis_name: Any) -> Any:
    _axis_index_abstract_eval(axis_name=axis_name)
    raise NotImplementedError("axis_index runs under vmap only")


def _axis_index_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], *, axis_name: Any
) -> tuple[Any, BatchDim]:
    if axis_data.name is None or axis_data.name not in _as_tuple(axis_name):
        return axis_index_p.bind(axis_name=axis_name), None
    return iota(np.int32, axis_data.size), 0


batching_rules.set(axis_index_p, _axis_index_batch)


# --- ppermute, pshuffle, pbroadcast ------------------------------------------------------


def ppermute(x: Any, axis_name: Any, perm: Sequence[tuple[int, int]]) -> Any:
    """`x` (a pytree) moved along the named axis: index `dst` gets what `src` had, for each
    `(src, dst)` pair of `perm`; indices no pair targets get zeros."""
    names = tuple(axis_name) if isinstance(axis_name, (list, tuple)) else (axis_name,)
    pairs = tuple(tuple(p) for p in perm)
    return tree_util.tree_map(
        lambda leaf: ppermute_p.bind(
            insert_collective_pvary(names, leaf), axis_name=names, perm=pairs
        ),
        x,
    )


def pshuffle(x: Any, axis_name: Any, perm: Sequence[int]) -> Any:
    """`x` (a pytree) permuted along the named axis: index i gets what `perm[i]` had."""
    if set(perm) != set(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)), strict=True)))


def pbroadcast(x: Any, axis_name: Any, source: int) -> Any:
    """`x` (a pytree) at index `source` of the named axis, at every index."""
    return tree_util.tree_map(
        lambda leaf: pbroadcast_p.bind(leaf, axis_name=axis_name, source=source), x
    )


def _same_type_abstract_eval(x: AbstractValue, *, axis_name: Any, **params: Any) -> AbstractValue:
    _check_axis_names(_as_tuple(axis_name), "ppermute")
    return x


def _named_only_impl(name: str) -> Any:
    def impl(x: Any, *, axis_name: Any, **params: Any) -> Any:
        _check_axis_names(_as_tuple(axis_name), name)
        raise NotImplementedError(f"{name} runs under vmap only")

    return impl


for _prim in (ppermute_p, pbroadcast_p):
    abstract_eval_rules.set(_prim, _same_type_abstract_eval)
    impl_rules.set(_prim, _named_only_impl("ppermute"))


def _ppermute_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], *, axis_name: Any,
    perm: tuple[tuple[int, int], ...],
) -> tuple[Any, BatchDim]:  # fmt: skip
    (x,), (d,) = vals, dims
    names = _as_tuple(axis_name)
    frame = axis_data.name
    if frame is None or frame not in names:
        return ppermute_p.bind(x, perm=perm, axis_name=names), d
    rest = tuple(n for n in names if n != frame)
    if rest:
        return ppermute_p.bind(x, perm=perm, axis_name=rest), d
    assert len(perm) == axis_data.size, "Permutation doesn't match the axis size!"
    if d is None:
        return x, d
    sources = np.zeros(axis_data.size, dtype=int)
    for src, dst in perm:
        sources[dst] = src
    return take(x, sources, axis=d), d


batching_rules.set(ppermute_p, _ppermute_batch)


def _ppermute_transpose(
    ct: Any, x: Any, *, axis_name: Any, perm: tuple[tuple[int, int], ...]
) -> Any:
    inverse = [(dst, src) for src, dst in perm]
    return [ppermute(ct, axis_name=axis_name, perm=inverse)]


deflinear(ppermute_p, _ppermute_transpose)


def _pbroadcast_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], *, axis_name: Any,
    source: int,
) -> tuple[Any, BatchDim]:  # fmt: skip
    (x,), (d,) = vals, dims
    names = _as_tuple(axis_name)
    frame = axis_data.name
    if frame is None or frame not in names:
        return pbroadcast_p.bind(x, axis_name=names, source=source), d
    if any(n != frame for n in names):
        raise NotImplementedError("pbroadcast batcher only supports a single axis")
    assert 0 <= source < axis_data.size, "collective broadcast doesn't fit in the axis size!"
    if d is None:
        return x, d
    # JAX passes a list of indices to `take` here, which refuses it (kept as JAX's behavior).
    raise TypeError(f"take requires ndarray or scalar arguments, got {list} at position 1.")


batching_rules.set(pbroadcast_p, _pbroadcast_batch)


def _full_like(ct: Any, fill: Any) -> Any:
    """`jnp.full_like(ct, fill)` for a `fill` that is a scalar or shaped like `ct`."""
    aval = typeof(ct)
    if shape_of(fill):
        return _convert_element_type(fill, aval.dtype, False)  # type: ignore[attr-defined]
    value = _convert_element_type(fill, aval.dtype, aval.weak_type)  # type: ignore[attr-defined]
    mesh = getattr(aval, "mesh", None)
    explicit = isinstance(ct, Tracer) and mesh is not None and mesh.has_explicit
    sharding = getattr(aval, "sharding", None) if explicit else None
    return pvary_like(broadcast(value, aval.shape, out_sharding=sharding), ct)  # type: ignore[attr-defined]


def _pbroadcast_transpose(ct: Any, x: Any, *, axis_name: Any, source: int) -> Any:
    is_source = eq(axis_index(axis_name), source)
    total = psum(ct, axis_name)
    return [select(is_source, _full_like(ct, total), _full_like(ct, 0))]


deflinear(pbroadcast_p, _pbroadcast_transpose)


needs_axis_rule.update(
    (psum_p, pmax_p, pmin_p, ppermute_p, pbroadcast_p, all_gather_p, reduce_scatter_p,
     all_to_all_p, axis_index_p)
)  # fmt: skip


__all__ = [
    "all_gather_p",
    "all_to_all_p",
    "axis_index",
    "axis_index_p",
    "axis_size",
    "pbroadcast",
    "pmax",
    "pmax_p",
    "pmean",
    "pmin",
    "pmin_p",
    "ppermute",
    "ppermute_p",
    "pshuffle",
    "psum",
    "psum_p",
]
