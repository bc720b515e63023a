"""Sharding annotations of a module lowered for a device mesh (Shardy, the `sdy` dialect).

A module for a mesh declares it once, as JAX prints it:

    sdy.mesh @mesh = <["i"=8]> {stablehlo.mesh = {axes = [{name = "i", size = 8 : i64}]}}

and annotates `@main`'s arguments and results whose placement is decided with
`sdy.sharding = #sdy.sharding<@mesh, [{"i"}, {}]>`, one closed dimension sharding per array
axis; the partitioner chooses the placement of values left unannotated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

from lamina_core.ir import (
    UNCONSTRAINED,
    AbstractMesh,
    AbstractValue,
    PartitionSpec,
    ShapedArray,
    entry_axes,
    physical_aval,
)

MESH_SYMBOL: Final = "mesh"
"""The symbol of the module's mesh (`@mesh`), which shardings and manual regions refer to."""


def _i64(value: int) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)


def emit_mesh(module: ir.Module, mesh: AbstractMesh) -> None:
    """Insert the `sdy.mesh @mesh` declaration at the top of `module` (context active)."""
    shape = list(zip(mesh.axis_names, mesh.axis_sizes, strict=True))
    axes = [sdy.MeshAxisAttr.get(str(n), s) for n, s in shape]
    described = ir.ArrayAttr.get(
        [ir.DictAttr.get({"name": ir.StringAttr.get(str(n)), "size": _i64(s)}) for n, s in shape]
    )
    body = module.body
    first = next(iter(body.operations), None)
    point = ir.InsertionPoint(body) if first is None else ir.InsertionPoint(first)
    with point:
        op = sdy.MeshOp(MESH_SYMBOL, sdy.MeshAttr.get(axes))
    op.operation.attributes["stablehlo.mesh"] = ir.DictAttr.get({"axes": described})


def sharding_attr(
    spec: PartitionSpec, ndim: int, mesh: AbstractMesh, *, open_dims: bool = False
) -> ir.Attribute:
    """`#sdy.sharding<@mesh, [...]>` for an array of rank `ndim` split as `spec` says.

    Raises:
        ValueError: `spec` has more entries than the array has axes, or names an axis that the
            mesh does not have.
    """
    parts = spec.partitions
    if len(parts) > ndim:
        raise ValueError(
            f"Sharding {spec} is only valid for values of rank at least {len(parts)}, but was "
            f"applied to a value of rank {ndim}"
        )
    dims = []
    for i in range(ndim):
        entry = parts[i] if i < len(parts) else None
        names = entry_axes(entry)
        for name in names:
            if name not in mesh.axis_names:
                raise ValueError(
                    f"Resource axis: {name} of {spec} is not found in mesh: "
                    f"{tuple(mesh.axis_names)}."
                )
        refs = [sdy.AxisRefAttr.get(str(n)) for n in names]
        closed = entry is not UNCONSTRAINED and not open_dims
        dims.append(sdy.DimensionShardingAttr.get(refs, is_closed=closed))
    return sdy.TensorShardingAttr.get(MESH_SYMBOL, dims)


def physical_ndim(aval: AbstractValue) -> int:
    """The rank of the array `aval`'s values are stored as (a key's data adds its own axes,
    which are never split: the spec leaves them out)."""
    if isinstance(aval, ShapedArray):
        return len(physical_aval(aval).shape)
    return len(getattr(aval, "shape", ()))


def annotate_main(
    fn: ir.Operation,
    mesh: AbstractMesh,
    first_arg: int,
    arg_avals: Sequence[AbstractValue],
    arg_specs: Sequence[PartitionSpec | None],
    out_avals: Sequence[AbstractValue],
    out_specs: Sequence[PartitionSpec | None],
) -> None:
    """Add `sdy.sharding` to `@main`'s arguments from position `first_arg` on (const args
    and real arguments, after the tokens) and to its results (after the tokens)."""
    n_args = len(fn.regions[0].blocks[0].arguments)
    n_outs = len(ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value).results)
    first_out = n_outs - len(out_avals)
    for key, count, first, avals, specs in (
        ("arg_attrs", n_args, first_arg, arg_avals, arg_specs),
        ("res_attrs", n_outs, first_out, out_avals, out_specs),
    ):
        if not any(s is not None for s in specs):
            continue
        attrs: list[dict[str, ir.Attribute]] = [{} for _ in range(count)]
        if key in fn.attributes:
            for i, d in enumerate(ir.ArrayAttr(fn.attributes[key])):
                entries = ir.DictAttr(d)
                attrs[i] = {entries[k].name: entries[k].attr for k in range(len(entries))}
        for k, (aval, spec) in enumerate(zip(avals, specs, strict=True)):
            if spec is not None:
                attrs[first + k]["sdy.sharding"] = sharding_attr(spec, physical_ndim(aval), mesh)
        fn.attributes[key] = ir.ArrayAttr.get([ir.DictAttr.get(a) for a in attrs])
