"""Private functions emitted for equations, and called where the equations are.

JAX lowers a few primitives (argmax, argmin, the cumulative reductions) out of line: each
becomes a private `func.func` named after the primitive, emitted once per module for each
distinct operand types and params, and every equation becomes a `func.call` of it. This keeps
modules small when the same reduction appears many times.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from jaxlib.mlir import ir

from lamina_mlir import _dynamic, _hlo
from lamina_mlir._context import LoweringRuleContext, ModuleContext
from lamina_mlir._mlir_context import IrValue

FunctionBody = Callable[[LoweringRuleContext, Sequence[IrValue]], Sequence[IrValue]]
"""`body(ctx, args)`: emits the function's ops (at the right insertion point) and returns its
results; `ctx` is the calling equation's context with an empty `const_lowering`."""


def symbol_name(fn: ir.Operation) -> str:
    return ir.StringAttr(fn.attributes["sym_name"]).value


def new_function(
    mctx: ModuleContext,
    name: str,
    in_types: Sequence[ir.Type],
    out_types: Sequence[ir.Type],
    *,
    public: bool = False,
    arg_locs: Sequence[ir.Location] | None = None,
) -> tuple[ir.Operation, ir.Block]:
    """A new `func.func` at the end of the module (renamed if `name` is taken): the op and
    its entry block."""
    function_type = ir.FunctionType.get(list(in_types), list(out_types))
    attributes = {
        "sym_name": ir.StringAttr.get(name),
        "function_type": ir.TypeAttr.get(function_type),
        "sym_visibility": ir.StringAttr.get("public" if public else "private"),
    }
    with ir.InsertionPoint(mctx.module.body):
        fn = ir.Operation.create("func.func", attributes=attributes, regions=1)
    mctx.symbol_table.insert(fn)
    if arg_locs is None:
        arg_locs = [ir.Location.unknown()] * len(in_types)
    entry = fn.regions[0].blocks.append(*in_types, arg_locs=list(arg_locs))
    return fn, entry


def call(name: str, out_types: Sequence[ir.Type], args: Sequence[IrValue]) -> list[IrValue]:
    callee = ir.FlatSymbolRefAttr.get(name)
    op = _hlo.emit("func.call", out_types, args, {"callee": callee})
    return list(op.results)


def call_as_function(
    ctx: LoweringRuleContext, args: Sequence[IrValue], params: dict[str, Any], body: FunctionBody
) -> list[IrValue]:
    """Emit `body` as a private function (once per types and params) and call it."""
    mctx = ctx.module_context
    prim = ctx.primitive
    assert prim is not None
    key = (
        "primitive",
        prim,
        tuple(ctx.avals_in),
        tuple(sorted(params.items(), key=lambda kv: kv[0])),
    )
    name = mctx.functions.get(key)
    out_types = [mctx.ir_type(a) for a in ctx.avals_out]
    # Under shape polymorphism the function takes the dimension variables first, unmarked
    # (as JAX's cached lowerings), whether its body uses them or not.
    dims = _dynamic.current_values()
    if name is None:
        dim_types = [d.type for d in dims.values()]
        in_types = [*dim_types, *(mctx.ir_type(a) for a in ctx.avals_in)]
        fn, entry = new_function(mctx, prim.name, in_types, out_types)
        inner = ctx.replace(const_lowering={}, name_stack="")
        entry_args = list(entry.arguments)
        dim_values = dict(zip(dims, entry_args[: len(dims)], strict=True))
        with (
            ir.InsertionPoint(entry),
            ir.Location.name(prim.name),
            _dynamic.dimension_values(dim_values, mctx),
        ):
            results = body(inner, entry_args[len(dims) :])
            _hlo.return_(results, "func.return")
        name = mctx.functions[key] = symbol_name(fn)
    return call(name, out_types, [*dims.values(), *args])
