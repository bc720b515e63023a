"""`reshard`: a value retyped to another sharding (JAX's `reshard` primitive).

With Auto and Manual axes a sharding type is a mesh (its spec is all None), so `reshard`
moves a value onto a mesh: the identity on values, and on the program (lowered, it is the
value itself, as JAX's for meshes with no Explicit axis). JAX emits it where a rule asks
for a value laid out like another one: `_one(x)`, the scalar seeds of `grad` and the `1 - y`
of `tanh`'s derivative, made inside a trace whose context mesh is not `x`'s. It prints with
no parameters, as JAX's; read back (`ir.parse`), its target is its result's type.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from lamina_core.interpreters import (
    AxisData,
    BatchDim,
    Zero,
    batching_rules,
    deflinear,
    is_undefined,
)
from lamina_core.ir import (
    AbstractValue,
    JaxprEqn,
    NamedSharding,
    PartitionSpec,
    PpContext,
    PpSettings,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    context_mesh,
    explicit_spec,
    get_abstract_mesh,
    impl_rules,
    named_in_context,
    pp,
    pp_eqn_rules,
    pp_eqn_with_params,
    register_param_decoder,
    spec_of,
)
from lamina_core.trace import Tracer, typeof

reshard_p: Final = Primitive("reshard")


@abstract_eval_rules.register(reshard_p)
def _abstract_eval(
    x: AbstractValue, *, dst_sharding: NamedSharding, concrete_mesh: Any
) -> AbstractValue:
    if not isinstance(x, ShapedArray):
        raise TypeError(f"reshard: expected an array, got {x.str_short(True)}")
    mesh = None if dst_sharding.mesh.empty else dst_sharding.mesh.abstract_mesh
    if mesh is not None and mesh.explicit_axes and x.mesh != mesh:
        # Onto Explicit axes from another mesh (out of `auto_axes`): the target types it.
        return x.update(mesh=mesh, spec=explicit_spec(mesh, dst_sharding.spec, len(x.shape)))
    return x if x.mesh == mesh else x.update(mesh=mesh)


@impl_rules.register(reshard_p)
def _impl(x: Any, **params: Any) -> Any:
    return x  # a layout over a mesh of Auto or Manual axes: the values are unchanged


def _transpose(ct: Any, x: Any, *, dst_sharding: NamedSharding, concrete_mesh: Any) -> list[Any]:
    assert is_undefined(x)
    if type(ct) is Zero:
        return [ct]
    return [reshard_p.bind(ct, dst_sharding=x.aval.sharding, concrete_mesh=concrete_mesh)]


deflinear(reshard_p, _transpose)


def _batch(axis_data: AxisData, vals: Any, dims: Any, **params: Any) -> tuple[Any, BatchDim]:
    (x,), (d,) = vals, dims
    if d is not None:
        mesh = params["dst_sharding"].mesh
        params = dict(params, dst_sharding=_spec_none(mesh, typeof(x)))
    return reshard_p.bind(x, **params), d


batching_rules.set(reshard_p, _batch)


def _pp(eqn: JaxprEqn, ctx: PpContext, settings: PpSettings) -> pp.Doc:
    return pp_eqn_with_params(eqn, ctx, settings, [])


pp_eqn_rules.set(reshard_p, _pp)


@register_param_decoder(reshard_p.name)
def _decode(
    params: dict[str, Any], ins: Sequence[AbstractValue], outs: Sequence[AbstractValue]
) -> dict[str, Any]:
    # Printed without params: the target is the result's type, over its mesh if the text
    # shows one (a spec), else the mesh in context where the text is read (a body's, or
    # `set_mesh`'s; the empty mesh if none: the same values, as a reshard moves none).
    if "dst_sharding" in params or not outs:
        return params
    (out,) = outs
    mesh = getattr(out, "mesh", None) or get_abstract_mesh()
    dst = NamedSharding(mesh, PartitionSpec(*spec_of(out)))
    return {"dst_sharding": dst, "concrete_mesh": None, **params}


def _spec_none(mesh: Any, aval: Any) -> NamedSharding:
    return NamedSharding(mesh, PartitionSpec(*(None,) * len(aval.shape)))


def reshard_like(x: Any, like: AbstractValue) -> Any:
    """`x` laid out over `like`'s mesh, as JAX's `full_like` makes its fill value: a `reshard`
    when `like` has a mesh that `x`'s type does not (else `x` itself)."""
    mesh = getattr(like, "mesh", None)
    if mesh is None:  # no mesh to lay `x` over (most programs): `x`'s type is not needed
        return x
    aval = typeof(x)
    if getattr(aval, "mesh", None) == mesh:
        return x
    if not isinstance(x, Tracer) and not mesh.has_explicit and context_mesh() == mesh:
        # A constant folded under a mesh of Auto axes in context is laid out over it (JAX's
        # sharding rule under Auto axes; under Explicit ones it keeps the empty mesh).
        return x
    return reshard_p.bind(x, dst_sharding=_spec_none(mesh, aval), concrete_mesh=None)


def reshard_sharding(sharding: Any, ndim: int) -> NamedSharding:
    """`jax.sharding.reshard`'s target for a value of rank `ndim`: a NamedSharding over an
    abstract mesh with one spec entry per dimension (a bare spec names the mesh in context)."""
    if isinstance(sharding, PartitionSpec):
        sharding = named_in_context(sharding)
    if not isinstance(sharding, NamedSharding) or sharding.mesh.empty:
        raise ValueError(
            "Reshard should only be used with out_shardings which are non-None and have a "
            f"non-empty mesh. Got sharding {sharding}."
        )
    parts = sharding.spec.partitions
    if len(parts) > ndim:
        raise ValueError(
            f"PartitionSpec {sharding.spec} is only valid for values of rank at least "
            f"{len(parts)}, but was applied to a value of rank {ndim}"
        )
    spec = PartitionSpec(
        *parts,
        *(None,) * (ndim - len(parts)),
        unreduced=sharding.spec.unreduced,
        reduced=sharding.spec.reduced,
    )
    return NamedSharding(sharding.mesh.abstract_mesh, spec)


def reshard_traced(x: Any, sharding: Any) -> Any:
    """`x` (a traced value) retyped to `sharding`: a `reshard` equation, as JAX's."""
    aval = typeof(x)
    dst = reshard_sharding(sharding, len(getattr(aval, "shape", ())))
    concrete = sharding.mesh if isinstance(sharding, NamedSharding) else None
    if concrete is not None and concrete.abstract_mesh is concrete:
        concrete = None
    return reshard_p.bind(x, dst_sharding=dst, concrete_mesh=concrete)
