"""Sharding in types over Explicit mesh axes: the spec of each staged result, as JAX's.

A value over a mesh with Explicit axes carries in its type how it is split
(`ShapedArray.spec`, printed `f32[8@data,3]`). Each primitive says how its results are
split from its operands' types and params: its sharding rule, `rule(mesh, in_avals, out,
**params)` returning the result's spec (a tuple of entries, or None for unsplit), or a list
of them for primitives of several results. Rules are registered in `sharding_rules`; the
families' rules (elementwise, structural, reductions, dot_general) live in
`lax._explicit_rules`. Staging applies them only to equations over such a mesh, so programs
over Auto and Manual axes never reach this module.

A primitive with no rule over split operands is an error naming it: a result type silently
unsplit would be wrong (JAX has a rule for every primitive).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from lamina_core.ir._avals import AbstractValue, ShapedArray, explicit_spec
from lamina_core.ir._jaxpr import jaxprs_in_params
from lamina_core.ir._mesh import AbstractMesh, NamedSharding, spec_axis_names
from lamina_core.ir._partition_spec import PartitionSpec
from lamina_core.ir._primitive import Primitive, RuleTable


class ShardingTypeError(Exception):
    """Operands whose sharding types a primitive cannot combine (JAX's
    `core.ShardingTypeError`)."""


Spec: TypeAlias = tuple[Any, ...] | None
ShardingRule: TypeAlias = Callable[..., Spec | Sequence[Spec]]
"""`rule(mesh, in_avals, out, **params)`: the result's spec (a list for several results)."""

sharding_rules: RuleTable[ShardingRule] = RuleTable("sharding (Explicit axes)")

context_mesh_primitives: set[Primitive] = set()
"""Primitives whose rule lays their results over the mesh in context when no operand has a
mesh, under Explicit axes too (JAX's n-ary broadcasting rule, `select_n`, `concatenate`,
`iota`); other rules keep their operands' empty mesh there."""

kept_result_types: set[Primitive] = set()
"""Primitives whose abstract evaluation already gives each result its spec (calls of a
traced body, whose result types are the body's): staging keeps their types."""


def spec_of(aval: Any) -> tuple[Any, ...]:
    """The spec entries of an array type: one per dimension, None where unsplit."""
    spec = getattr(aval, "spec", None)
    if spec is not None:
        return spec  # type: ignore[no-any-return]
    return (None,) * len(getattr(aval, "shape", ()))


def asked_spec(sharding: Any, mesh: AbstractMesh | None, ndim: int) -> Spec:
    """The spec an `out_sharding`/`sharding` parameter gives a result of rank `ndim`."""
    if sharding is None:
        return None
    if isinstance(sharding, PartitionSpec):
        return explicit_spec(mesh, sharding, ndim)
    spec = getattr(sharding, "spec", None)
    if spec is None:
        return None
    return explicit_spec(sharding.mesh.abstract_mesh, spec, ndim)


def _asks_split(sharding: Any) -> bool:
    """Whether a `sharding`/`out_sharding` parameter splits its result over some axis."""
    spec = sharding if isinstance(sharding, PartitionSpec) else getattr(sharding, "spec", None)
    return spec is not None and bool(spec_axis_names(spec))


def _split(avals: Sequence[AbstractValue]) -> bool:
    return any(getattr(a, "spec", None) is not None for a in avals)


def _retype(out: Any, mesh: AbstractMesh, spec: Spec) -> Any:
    if type(out) is not ShapedArray:
        return out
    if out.mesh is mesh and out.spec == spec:
        return out
    return out.update(mesh=mesh, spec=spec)


def explicit_result(
    prim: Primitive,
    in_avals: Sequence[AbstractValue],
    out: Any,
    mesh: AbstractMesh,
    params: dict[str, Any],
) -> Any:
    """The result type(s) `out` of `prim` over `mesh` (which has Explicit axes), split as
    the primitive's sharding rule says."""
    if prim in kept_result_types or next(jaxprs_in_params(params), None) is not None:
        return out
    rule = sharding_rules.get(prim)
    if rule is None:
        asked = params.get("sharding", params.get("out_sharding"))
        if not _split(in_avals) and not _asks_split(asked):
            # Nothing is split: the results are not either.
            if prim.multiple_results:
                return [_retype(a, mesh, None) for a in out]
            return _retype(out, mesh, None)
        described = ", ".join(a.str_short(True) for a in in_avals)
        raise NotImplementedError(
            f"'{prim.name}' has no sharding rule for values split over Explicit mesh axes "
            f"(operands {described}); reshard them to be unsplit (P()) first, or use a mesh "
            "of Auto axes"
        )
    specs = rule(mesh, in_avals, out, **params)
    if prim.multiple_results:
        return [_retype(a, mesh, s) for a, s in zip(out, specs, strict=True)]  # type: ignore[arg-type]  # a sequence for multi-result primitives
    return _retype(out, mesh, specs)  # type: ignore[arg-type]  # one spec for one result


def _entry_str(spec: Sequence[Any]) -> str:
    return str(tuple(spec))


def broadcasting_spec(name: str, avals: Sequence[AbstractValue]) -> Spec:
    """JAX's rule for elementwise operands: the non-scalar operands' specs agree per
    dimension (an unsplit dimension takes another operand's split; size-1 unsplit
    dimensions are ignored); two different splits are an error."""
    arrays = [a for a in avals if getattr(a, "shape", ())]
    if not arrays:
        return None
    shapes = [a.shape for a in arrays]  # type: ignore[attr-defined]  # arrays have shapes
    if len({len(s) for s in shapes}) != 1:
        raise TypeError(
            f"{name}: arrays must have same number of dimensions, got "
            f"{', '.join(map(str, shapes))}."
        )
    specs = [spec_of(a) for a in arrays]
    if all(s == specs[0] for s in specs[1:]):
        return specs[0]
    out: list[Any] = []
    for entries, sizes in zip(zip(*specs, strict=True), zip(*shapes, strict=True), strict=True):
        if all(e == entries[0] for e in entries[1:]):
            out.append(entries[0])
            continue
        nontrivial = [e for e, d in zip(entries, sizes, strict=True) if not (d == 1 and e is None)]
        if not nontrivial:
            out.append(None)
        elif all(e == nontrivial[0] for e in nontrivial[1:]):
            out.append(nontrivial[0])
        else:
            chosen = None
            for e in entries:
                if chosen is None and e is not None:
                    chosen = e
                elif chosen is not None and e is not None and chosen != e:
                    raise ShardingTypeError(
                        f"{name} got incompatible shardings for broadcasting: "
                        f"{', '.join(map(_entry_str, specs))}."
                    )
            out.append(chosen)
    return tuple(out)


def broadcast_sharding(avals: Sequence[Any]) -> NamedSharding | None:
    """The sharding operands of types `avals` are broadcast to, as JAX's
    `broadcast_shardings` (ranks padded with leading unsplit dimensions): the widest
    operand's when the others' specs agree with it; None when that has no mesh (JAX's empty
    mesh, which canonicalizes to None) or none of them has one."""
    if all(getattr(a, "mesh", None) is None for a in avals):
        return None
    ndim = max(len(a.shape) for a in avals)
    widest = next(a for a in avals if len(a.shape) == ndim)
    wide_spec = spec_of(widest)
    if ndim == 0 or all(wide_spec[ndim - len(a.shape) :] == spec_of(a) for a in avals):
        if widest.mesh is None:
            return None
        return sharding_of(widest.mesh, _canon(wide_spec), ndim)
    mesh = next(m for a in avals if (m := getattr(a, "mesh", None)) is not None)
    padded = [
        ShapedArray(
            (1,) * (ndim - len(a.shape)) + a.shape,
            a.dtype,
            mesh=mesh,
            spec=(None,) * (ndim - len(a.shape)) + spec_of(a),
        )
        for a in avals
    ]
    return sharding_of(mesh, broadcasting_spec("broadcast_shardings", padded), ndim)


def _canon(spec: Sequence[Any]) -> Spec:
    return None if all(e is None for e in spec) else tuple(spec)


def elementwise_rule(name: str) -> ShardingRule:
    """The sharding rule of the elementwise primitive `name`."""

    def rule(
        mesh: AbstractMesh, in_avals: Sequence[AbstractValue], out: Any, **params: Any
    ) -> Spec:
        return broadcasting_spec(name, in_avals)

    return rule


def sharding_of(mesh: AbstractMesh, spec: Spec, ndim: int) -> NamedSharding:
    """The NamedSharding of a result of rank `ndim` split as `spec` over `mesh`."""
    return NamedSharding(mesh, PartitionSpec(*(spec or (None,) * ndim)))


__all__ = [
    "ShardingTypeError",
    "broadcasting_spec",
    "elementwise_rule",
    "explicit_result",
    "sharding_rules",
    "spec_of",
]
