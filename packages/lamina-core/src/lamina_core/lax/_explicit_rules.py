"""Sharding rules over Explicit mesh axes of lax's common primitives, as JAX's.

Each rule gives a result's spec (see `explicit_sharding`) from its operands' specs:
structural primitives move, keep or drop their operands' entries; reductions drop the
reduced dimensions'; `dot_general` keeps batch and free dimensions' and refuses ambiguous
splits of contracting dimensions; a `sharding`/`out_sharding` parameter overrides the rule.
Errors are JAX's (`ShardingTypeError`, word for word).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from lamina_core.interpreters import add_any_p
from lamina_core.ir import (
    AbstractMesh,
    AbstractValue,
    NamedSharding,
    PartitionSpec,
    ShardingTypeError,
    Spec,
    asked_spec,
    context_mesh_primitives,
    elementwise_rule,
    entry_axes,
    sharding_rules,
    spec_of,
)
from lamina_core.lax._cumulative import (
    cumlogsumexp_p,
    cummax_p,
    cummin_p,
    cumprod_p,
    cumsum_p,
)
from lamina_core.lax._joining import concatenate_p, pad_p
from lamina_core.lax._linalg import dot_general_p
from lamina_core.lax._misc_prims import copy_p
from lamina_core.lax._reductions import (
    argmax_p,
    argmin_p,
    reduce_and_p,
    reduce_max_p,
    reduce_min_p,
    reduce_or_p,
    reduce_prod_p,
    reduce_sum_p,
    reduce_xor_p,
)
from lamina_core.lax._reshard import reshard_p
from lamina_core.lax._selection import clamp_p, reduce_precision_p, select_n_p
from lamina_core.lax._shape import iota_p, reshape_p, rev_p, squeeze_p, transpose_p
from lamina_core.lax._sharding_constraint import sharding_constraint_p
from lamina_core.lax._slicing import dynamic_slice_p, dynamic_update_slice_p, slice_p
from lamina_core.lax._stop_gradient import stop_gradient_p
from lamina_core.lax._structural import broadcast_in_dim_p, convert_element_type_p


def _canon(entries: Sequence[Any]) -> Spec:
    return None if all(e is None for e in entries) else tuple(entries)


def _ndim(aval: Any) -> int:
    return len(getattr(aval, "shape", ()))


def _named(mesh: AbstractMesh, spec: Sequence[Any]) -> NamedSharding:
    return NamedSharding(mesh, PartitionSpec(*spec))


def _operand_rule(
    mesh: AbstractMesh, in_avals: Sequence[AbstractValue], out: Any, **p: Any
) -> Spec:
    """The result is split as the (first) operand."""
    return _canon(spec_of(in_avals[0]))


for _prim in (copy_p, rev_p, reduce_precision_p, stop_gradient_p):
    sharding_rules.set(_prim, _operand_rule)


sharding_rules.set(add_any_p, elementwise_rule("add_any"))
context_mesh_primitives.update((add_any_p, clamp_p, select_n_p, concatenate_p, iota_p))


@sharding_rules.register(clamp_p)
def _clamp(mesh: AbstractMesh, in_avals: Sequence[AbstractValue], out: Any, **p: Any) -> Spec:
    return _canon(spec_of(in_avals[1]))


@sharding_rules.register(convert_element_type_p)
def _convert(
    mesh: AbstractMesh, in_avals: Sequence[AbstractValue], out: Any, *, sharding: Any, **p: Any
) -> Spec:
    if sharding is not None:
        return asked_spec(sharding, mesh, _ndim(out))
    return _canon(spec_of(in_avals[0]))


@sharding_rules.register(broadcast_in_dim_p)
def _broadcast_in_dim(
    mesh: AbstractMesh,
    in_avals: Sequence[AbstractValue],
    out: Any,
    *,
    shape: Sequence[int],
    broadcast_dimensions: Sequence[int],
    sharding: Any,
) -> Spec:
    if sharding is not None:
        return asked_spec(sharding, mesh, len(shape))
    entries = iter(spec_of(in_avals[0]))
    dims = set(broadcast_dimensions)
    return _canon([next(entries) if i in dims else None for i in range(len(shape))])


@sharding_rules.register(iota_p)
def _iota(
    mesh: AbstractMesh,
    in_avals: Sequence[AbstractValue],
    out: Any,
    *,
    sharding: Any,
    shape: Sequence[int],
    **p: Any,
) -> Spec:
    return asked_spec(sharding, mesh, len(shape))


@sharding_rules.register(transpose_p)
def _transpose(
    mesh: AbstractMesh, in_avals: Sequence[AbstractValue], out: Any, *, permutation: Sequence[int]
) -> Spec:
    spec = spec_of(in_avals[0])
    return _canon([spec[i] for i in permutation])


@sharding_rules.register(squeeze_p)
def _squeeze(
    mesh: AbstractMesh, in_avals: Sequence[AbstractValue], out: Any, *, dimensions: Sequence[int]
) -> Spec:
    gone = set(dimensions)
    return _canon([e for i, e in enumerate(spec_of(in_avals[0])) if i not in gone])


def _reduced(
    mesh: AbstractMesh,
    in_avals: Sequence[AbstractValue],
    out: Any,
    *,
    axes: Sequence[int],
    **p: Any,
) -> Spec:
    if p.get("out_sharding") is not None:
        return asked_spec(p["out_sharding"], mesh, _ndim(out))
    gone = set(axes)
    return _canon([e for i, e in enumerate(spec_of(in_avals[0])) if i not in gone])


for _prim in (
    reduce_sum_p,
    reduce_prod_p,
    reduce_max_p,
    reduce_min_p,
    reduce_and_p,
    reduce_or_p,
    reduce_xor_p,
    argmax_p,
    argmin_p,
):
    sharding_rules.set(_prim, _reduced)


def _cumulative(
    mesh: AbstractMesh, in_avals: Sequence[AbstractValue], out: Any, *, axis: int, **p: Any
) -> Spec:
    spec = spec_of(in_avals[0])
    if spec[axis] is not None:
        raise ShardingTypeError(
            f"Input should be unsharded over the axis being reduced. Got input type="
            f"{in_avals[0]} and axis={axis}"
        )
    return _canon(spec)


for _prim in (cumsum_p, cumprod_p, cummax_p, cummin_p, cumlogsumexp_p):
    sharding_rules.set(_prim, _cumulative)


def _split_size(mesh: AbstractMesh, entry: Any) -> int:
    sizes = mesh.shape
    return math.prod(sizes[n] for n in entry_axes(entry))


def _varying_shape(mesh: AbstractMesh, operand: Any, out_shape: Sequence[int], name: str) -> Spec:
    """JAX's rule for results whose shape may differ from the operand's (slicing,
    padding): the operand's spec, when every resized split dimension still divides."""
    spec = spec_of(operand)
    for op_size, out_size, entry in zip(operand.shape, out_shape, spec, strict=True):
        if op_size != out_size and entry is not None and out_size % _split_size(mesh, entry):
            raise ShardingTypeError(
                f"{name} on sharded dims where out dim ({out_size}) is not divisible by mesh "
                f"axes ({_split_size(mesh, entry)}) with spec ({entry}) is not implemented. "
                f"Got input type={operand.str_short(True)} and output shape="
                f"{tuple(out_shape)}"
            )
    return _canon(spec)


@sharding_rules.register(slice_p)
def _slice(mesh: AbstractMesh, in_avals: Sequence[AbstractValue], out: Any, **p: Any) -> Spec:
    return _varying_shape(mesh, in_avals[0], out.shape, "slicing")


@sharding_rules.register(dynamic_slice_p)
def _dynamic_slice(
    mesh: AbstractMesh, in_avals: Sequence[AbstractValue], out: Any, **p: Any
) -> Spec:
    return _varying_shape(mesh, in_avals[0], out.shape, "dynamic_slice")


def _with_axis_types(aval: Any) -> str:
    kinds: dict[Any, list[Any]] = {}
    for name, kind in zip(aval.mesh.axis_names, aval.mesh.axis_types, strict=True):
        kinds.setdefault(kind, []).append(name)
    return f"{aval.str_short(True)}({ {k: tuple(v) for k, v in kinds.items()} })"


@sharding_rules.register(dynamic_update_slice_p)
def _dynamic_update_slice(
    mesh: AbstractMesh, in_avals: Sequence[AbstractValue], out: Any, **p: Any
) -> Spec:
    operand, update = in_avals[0], in_avals[1]
    placed = getattr(operand, "mesh", None) is not None and getattr(update, "mesh", None)
    # An operand or update on no mesh (a buffer a lowering makes) takes the other's layout.
    if placed and (operand.mesh, spec_of(operand)) != (update.mesh, spec_of(update)):  # type: ignore[attr-defined]  # arrays
        raise ShardingTypeError(
            "dynamic_update_slice operand sharding must be equal to update sharding, got "
            f"operand sharding {_with_axis_types(operand)} and update sharding "
            f"{_with_axis_types(update)}."
        )
    return _canon(spec_of(operand))


@sharding_rules.register(pad_p)
def _pad(mesh: AbstractMesh, in_avals: Sequence[AbstractValue], out: Any, **p: Any) -> Spec:
    return _varying_shape(mesh, in_avals[0], out.shape, "padding")


@sharding_rules.register(select_n_p)
def _select_n(mesh: AbstractMesh, in_avals: Sequence[AbstractValue], out: Any) -> Spec:
    which, *cases = in_avals
    first = spec_of(cases[0])
    if any(spec_of(c) != first for c in cases[1:]):
        shown = ", ".join(str(_named(mesh, spec_of(c))) for c in cases)
        raise ShardingTypeError(f"select cases must have the same shardings, got [{shown}].")
    if _ndim(which) and spec_of(which) != first:
        raise ShardingTypeError(
            "select `which` must be scalar or have the same sharding as cases, got `which` "
            f"sharding {_named(mesh, spec_of(which))} but case sharding "
            f"{_named(mesh, first)}."
        )
    return _canon(first)


@sharding_rules.register(concatenate_p)
def _concatenate(mesh: AbstractMesh, in_avals: Sequence[AbstractValue], out: Any, **p: Any) -> Spec:
    first = spec_of(in_avals[0])
    if any(spec_of(a) != first for a in in_avals[1:]):
        shown = ", ".join(str(_named(mesh, spec_of(a))) for a in in_avals)
        raise ShardingTypeError(
            f"All operands should have the same sharding. Got shardings {shown}"
        )
    return _canon(first)


def _check_match(lhs: tuple[Any, ...], rhs: tuple[Any, ...], msg: str) -> None:
    for a, b in zip(lhs, rhs, strict=True):
        if a is not None and b is not None and a != b:
            raise ShardingTypeError(msg)


@sharding_rules.register(dot_general_p)
def _dot_general(
    mesh: AbstractMesh,
    in_avals: Sequence[AbstractValue],
    out: Any,
    *,
    dimension_numbers: Any,
    out_sharding: Any,
    **p: Any,
) -> Spec:
    if out_sharding is not None:
        return asked_spec(out_sharding, mesh, _ndim(out))
    lhs, rhs = spec_of(in_avals[0]), spec_of(in_avals[1])
    (lc, rc), (lb, rb) = dimension_numbers
    lc_spec, rc_spec = tuple(lhs[i] for i in lc), tuple(rhs[i] for i in rc)
    lb_spec, rb_spec = tuple(lhs[i] for i in lb), tuple(rhs[i] for i in rb)
    _check_match(
        lb_spec,
        rb_spec,
        "dot_general requires lhs batch dimensions and rhs batch dimensions to have the "
        f"consistent sharding, got {lb_spec} and {rb_spec}.",
    )
    _check_match(
        lc_spec,
        rc_spec,
        "dot_general requires contracting dimensions to have consistent sharding, got "
        f"{lc_spec} and {rc_spec}.",
    )
    for a, b in zip(lc_spec, rc_spec, strict=True):
        if a is not None and b is not None:
            raise ShardingTypeError(
                "Contracting dimensions are sharded and it is ambiguous how the output should "
                "be sharded. Please specify the output sharding via the `out_sharding` "
                f"parameter. Got lhs_contracting_spec={lc_spec} and rhs_contracting_spec="
                f"{rc_spec}"
            )
    lhs_used, rhs_used = {*lc, *lb}, {*rc, *rb}
    lhs_free = [e for i, e in enumerate(lhs) if i not in lhs_used]
    rhs_free = [e for i, e in enumerate(rhs) if i not in rhs_used]
    return _canon([*lb_spec, *lhs_free, *rhs_free])


@sharding_rules.register(sharding_constraint_p)
def _constraint(
    mesh: AbstractMesh, in_avals: Sequence[AbstractValue], out: Any, *, sharding: Any, **p: Any
) -> Spec:
    return asked_spec(sharding, mesh, _ndim(out))


@sharding_rules.register(reshard_p)
def _reshard(
    mesh: AbstractMesh, in_avals: Sequence[AbstractValue], out: Any, *, dst_sharding: Any, **p: Any
) -> Spec:
    return asked_spec(dst_sharding, mesh, _ndim(out))


# ---- reshape ------------------------------------------------------------------------------


def _reshape_error(operand: Any, new_sizes: Sequence[int]) -> ShardingTypeError:
    return ShardingTypeError(
        "This reshape is not supported. Please specify the sharding of the output via the "
        f"`out_sharding` argument of jax.lax.reshape. Got operand type: {operand}, new sizes: "
        f"{tuple(new_sizes)}"
    )


def _groups(old: Sequence[int], new: Sequence[int]) -> list[tuple[list[int], list[int]]] | None:
    """Consecutive dimensions of `old` and `new` of equal sizes, paired (None if a size-1
    dimension makes the pairing ambiguous)."""
    out: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(old) or j < len(new):
        if i >= len(old) or j >= len(new):
            return None
        a, b = [i], [j]
        pa, pb = old[i], new[j]
        i, j = i + 1, j + 1
        while pa != pb:
            if pa < pb:
                if i >= len(old):
                    return None
                a.append(i)
                pa *= old[i]
                i += 1
            else:
                if j >= len(new):
                    return None
                b.append(j)
                pb *= new[j]
                j += 1
        out.append((a, b))
    return out


@sharding_rules.register(reshape_p)
def _reshape(
    mesh: AbstractMesh,
    in_avals: Sequence[AbstractValue],
    out: Any,
    *,
    new_sizes: Sequence[int],
    dimensions: Sequence[int] | None,
    sharding: Any,
) -> Spec:
    """JAX's reshape rule for the cases it supports: no split dimension; size-1 dimensions
    added or removed; one dimension split into several (its axes going to the leading ones)
    or several merged into one (their axes in order, unsplit dimensions only trailing)."""
    if sharding is not None:
        return asked_spec(sharding, mesh, len(new_sizes))
    operand = in_avals[0]
    spec = spec_of(operand)
    if all(e is None for e in spec):
        return None
    shape = operand.shape  # type: ignore[attr-defined]  # an array
    if [d for d in shape if d != 1] == [d for d in new_sizes if d != 1]:
        kept = iter(e for d, e in zip(shape, spec, strict=True) if d != 1)
        return _canon([None if n == 1 else next(kept) for n in new_sizes])
    groups = None if 1 in shape or 1 in new_sizes else _groups(shape, new_sizes)
    reshaped = [g for g in (groups or []) if len(g[0]) > 1 or len(g[1]) > 1]
    if groups is None or len(reshaped) != 1 or dimensions is not None:
        raise _reshape_error(operand, new_sizes)
    result: list[Any] = []
    for old_dims, new_dims in groups:
        if len(old_dims) == 1 and len(new_dims) == 1:
            result.append(spec[old_dims[0]])
            continue
        names: list[Any] = []
        entries = [spec[i] for i in old_dims]
        if len(old_dims) > 1:  # a merge: splits only on leading dims, in order
            while entries and entries[-1] is None:
                entries.pop()
            if None in entries:
                raise _reshape_error(operand, new_sizes)
        for e in entries:
            names.extend(entry_axes(e))
        result.extend(
            _place_axes(mesh, names, [new_sizes[j] for j in new_dims], operand, new_sizes)
        )
    return _canon(result)


def _place_axes(
    mesh: AbstractMesh, names: list[Any], sizes: list[int], operand: Any, new_sizes: Sequence[int]
) -> list[Any]:
    """Mesh axes `names`, in order, over new dimensions of `sizes`: each dimension takes
    axes while it divides (JAX's `split_partitions`)."""
    pending = iter(names)
    out: list[Any] = []
    for size in sizes:
        taken: list[Any] = []
        while size > 1:
            name = next(pending, None)
            if name is None:
                break
            size, rest = divmod(size, mesh.shape[name])
            if rest:
                raise _reshape_error(operand, new_sizes)
            taken.append(name)
        out.append(None if not taken else taken[0] if len(taken) == 1 else tuple(taken))
    if next(pending, None) is not None:
        raise _reshape_error(operand, new_sizes)
    return out
