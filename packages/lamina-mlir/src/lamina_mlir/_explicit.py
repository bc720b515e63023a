"""Lowering of sharding in types over Explicit mesh axes: each result of the primitives JAX
constrains is wrapped in `sdy.sharding_constraint` to its type's spec, as JAX's lowering
does (`lower_with_sharding_in_types`), and so are elementwise operands broadcast to, or
retyped as, the result's type. Modules over meshes without Explicit axes are untouched.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

from lamina_core.ir import (
    AbstractMesh,
    AbstractValue,
    AxisType,
    Primitive,
    ShapedArray,
    entry_axes,
    physical_aval,
)
from lamina_core.lax import binary_primitives, unary_primitives
from lamina_mlir import _hlo
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._sharding import MESH_SYMBOL

_CONSTRAINED_NAMES: Final = frozenset(
    {
        "add_any",
        "bitcast_convert_type",
        "broadcast_in_dim",
        "clamp",
        "concatenate",
        "cond",
        "convert_element_type",
        "dot_general",
        "dynamic_slice",
        "dynamic_update_slice",
        "gather",
        "iota",
        "pad",
        "reduce_and",
        "reduce_max",
        "reduce_min",
        "reduce_or",
        "reduce_precision",
        "reduce_prod",
        "reduce_sum",
        "reduce_xor",
        "reshape",
        "reshard",
        "rev",
        "select_n",
        "slice",
        "split",
        "squeeze",
        "transpose",
        "while",
    }
)
"""Primitives (besides the elementwise ones) whose lowering JAX ends with a sharding
constraint on each result over a mesh with Explicit axes."""


def constrains(prim: Primitive) -> bool:
    """Whether `prim`'s results are constrained to their types over Explicit axes."""
    return prim.name in _CONSTRAINED_NAMES or prim in _ELEMENTWISE


_UNCONSTRAINED_ELEMENTWISE: Final = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "eq_to"})
"""Comparisons: JAX constrains their broadcast operands but not their results."""

_ELEMENTWISE: Final = frozenset(
    p for p in (*unary_primitives, *binary_primitives) if p.name not in _UNCONSTRAINED_ELEMENTWISE
)


def explicit_module(ctx: LoweringRuleContext) -> bool:
    mesh = ctx.module_context.mesh
    return mesh is not None and mesh.has_explicit


def _attr(aval: ShapedArray, mesh: AbstractMesh) -> ir.Attribute:
    spec = aval.spec or (None,) * len(aval.shape)
    auto = AxisType.Auto in mesh.axis_types
    used: set[object] = set()
    dims = []
    for entry in spec:
        names = entry_axes(entry)
        used.update(names)
        refs = [sdy.AxisRefAttr.get(str(n)) for n in names]
        dims.append(sdy.DimensionShardingAttr.get(refs, is_closed=not auto))
    replicated = []
    if auto:  # JAX: the Explicit axes no dimension uses stay unused (open dimensions)
        replicated = [
            sdy.AxisRefAttr.get(str(n))
            for n, t in zip(mesh.axis_names, mesh.axis_types, strict=True)
            if t is AxisType.Explicit and n not in used
        ]
    return sdy.TensorShardingAttr.get(MESH_SYMBOL, dims, replicated)


def constrain(ctx: LoweringRuleContext, x: IrValue, aval: AbstractValue) -> IrValue:
    """`x` constrained to `aval`'s sharding, if `aval` is over a mesh with Explicit axes."""
    mesh = ctx.module_context.mesh
    if (
        mesh is None
        or type(aval) is not ShapedArray
        or aval.mesh is None
        or not aval.mesh.has_explicit
        or AxisType.Manual in aval.mesh.axis_types
    ):
        return x
    return sdy.ShardingConstraintOp(x, _attr(physical_aval(aval), mesh)).result


def broadcast_to_result(
    ctx: LoweringRuleContext,
    operands: Sequence[IrValue],
    avals: Sequence[AbstractValue],
    out: ShapedArray,
) -> list[IrValue]:
    """Elementwise operands as JAX's lowering makes them over Explicit axes: each broadcast
    to the result's shape (over trailing dimensions) and constrained to its sharding; an
    operand of the result's shape but another sharding constrained to it."""
    result = []
    for x, a in zip(operands, avals, strict=True):
        assert type(a) is ShapedArray
        target = ShapedArray(out.shape, a.dtype, False, out.mesh, spec=out.spec)
        if a.shape == out.shape:
            same = (a.mesh, a.spec) == (out.mesh, out.spec)
            result.append(x if same else constrain(ctx, x, target))
            continue
        dims = range(len(out.shape) - a.ndim, len(out.shape))
        widened = _hlo.broadcast_in_dim(ctx.caches, x, out.shape, a.dtype, dims)
        result.append(constrain(ctx, widened, target))
    return result


def constrain_results(ctx: LoweringRuleContext, outs: Sequence[IrValue]) -> list[IrValue]:
    return [constrain(ctx, x, a) for x, a in zip(outs, ctx.avals_out, strict=True)]
