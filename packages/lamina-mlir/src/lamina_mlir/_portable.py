"""Portable StableHLO artifacts: what export saves of a lowered module, and calling one.

A portable artifact is a module serialized as versioned VHLO bytecode (StableHLO's
compatibility format), the same bytes JAX's `Exported.mlir_module_serialized` holds: a consumer
up to a few weeks older or years newer reads it. It is written for a target version four weeks
old, as JAX writes it.

Calling an artifact from another program merges its functions into that program's module
(renamed so nothing collides, all made private) and emits a `func.call` of its `@main`. Its
`@main` takes, in order, the platform index (when exported for several platforms), the tokens of
ordered effects, the hoisted constants, then the arguments; the caller passes them all.

This module knows nothing of jaxprs or of what the artifact's function computes.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Final

from jaxlib import _jax
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from lamina_core.ir import AbstractValue
from lamina_mlir import _dynamic, _hlo
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._functions import call
from lamina_mlir._ir_types import aval_to_ir_type
from lamina_mlir._merge import merge_modules
from lamina_mlir._mlir_context import ContextCaches, IrValue, make_context
from lamina_mlir._module import LoweredModule
from lamina_mlir._poly_main import add_dim_var_main

PLATFORM_INDEX_ATTR: Final = "jax.global_constant"
"""The attribute marking `@main`'s leading platform index argument (JAX's convention)."""

_CALLEE_ATTRS: Final = ("arg_attrs", "res_attrs")
"""What a merged `@main` loses: argument and result attributes (donation, aliasing, result
names) describe an entry point, not a private callee."""


def serialize_portable_artifact(
    lowered: LoweredModule,
    *,
    attributes: Mapping[str, bool] | None = None,
    platform_index: bool = False,
    arg_descriptions: Sequence[str] | None = None,
) -> bytes:
    """`lowered`'s module as a portable artifact, its own module left as it is.

    Args:
        lowered: the module.
        attributes: boolean module attributes to add, e.g. `jax.uses_shape_polymorphism`.
        platform_index: give `@main` a leading `tensor<i32>` platform index argument (unused
            in the body: Lamina lowers the same ops for every platform), as a module exported
            for several platforms takes one.
        arg_descriptions: the real arguments as errors name them (`args[0]`), for the shape
            assertions of a module with symbolic shapes (whose `@main` then computes the
            dimension variables from its arguments, see `_poly_main`).
    """
    with lowered.context, ir.Location.unknown():
        copy = ir.Module.parse(lowered.as_bytecode())
        for name, value in (attributes or {}).items():
            copy.operation.attributes[name] = ir.BoolAttr.get(value)
        if _dynamic.dimension_variables(lowered.in_avals):
            n = len(lowered.in_avals)
            descriptions = arg_descriptions or [f"args[{i}]" for i in range(n)]
            leading = len(lowered.const_args)
            add_dim_var_main(copy, lowered.in_avals, leading, descriptions, platform_index)
            copy.operation.attributes["jax.uses_shape_polymorphism"] = ir.BoolAttr.get(True)
        elif platform_index:
            _add_platform_index(copy)
        target = hlo.get_version_from_compatibility_requirement(
            hlo.StablehloCompatibilityRequirement.WEEK_4
        )
        # jaxlib's serializer, as JAX's export (with Shardy's dialect kept as it is, as the
        # CPU backend asks): it also hoists each function's constants to its entry, so an
        # artifact reads as JAX's does.
        out = io.BytesIO()
        copy.operation.write_bytecode(out)
        return bytes(_jax.mlir.serialize_portable_artifact(out.getvalue(), target, True))


def _add_platform_index(module: ir.Module) -> None:
    """Rename `@main` to a private function and add a `@main` with a leading platform index
    argument that calls it with the rest."""
    table = ir.SymbolTable(module.operation)
    old = table["main"]
    old.attributes["sym_visibility"] = ir.StringAttr.get("private")
    table.set_symbol_name(old, "_wrapped_jax_export_main")
    inner = ir.FunctionType(ir.TypeAttr(old.attributes["function_type"]).value)
    index_type = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
    in_types = [index_type, *inner.inputs]
    function_type = ir.FunctionType.get(in_types, list(inner.results))
    attributes = {
        "sym_name": ir.StringAttr.get("main"),
        "function_type": ir.TypeAttr.get(function_type),
        "sym_visibility": ir.StringAttr.get("public"),
    }
    arg_attrs: list[ir.Attribute] = [
        ir.DictAttr.get({PLATFORM_INDEX_ATTR: ir.StringAttr.get("_platform_index")})
    ]
    if "arg_attrs" in old.attributes:
        arg_attrs += list(ir.ArrayAttr(old.attributes["arg_attrs"]))
    else:
        arg_attrs += [ir.DictAttr.get({}) for _ in inner.inputs]
    attributes["arg_attrs"] = ir.ArrayAttr.get(arg_attrs)
    if "res_attrs" in old.attributes:
        attributes["res_attrs"] = old.attributes["res_attrs"]
    with ir.InsertionPoint.at_block_begin(module.body):
        main = ir.Operation.create("func.func", attributes=attributes, regions=1)
    entry = main.regions[0].blocks.append(*in_types)
    with ir.InsertionPoint(entry):
        results = call("_wrapped_jax_export_main", list(inner.results), list(entry.arguments)[1:])
        _hlo.emit("func.return", [], results)
    for name in _CALLEE_ATTRS:
        if name in old.attributes:
            del old.attributes[name]


def portable_artifact_module(data: bytes) -> ir.Module:
    """The module in a portable artifact, in a new context of its own.

    Raises:
        ValueError: `data` is not a portable StableHLO artifact.
    """
    return _deserialize(make_context(), data)


def _deserialize(context: ir.Context, data: bytes) -> ir.Module:
    try:
        with context:  # jaxlib's, as JAX's `mlir_module` and calls read artifacts
            module: ir.Module | None = _jax.mlir.deserialize_portable_artifact(data)
    except Exception as err:  # the bindings raise bare Exceptions for bad bytecode
        raise ValueError(f"not a portable StableHLO artifact: {err}") from None
    if module is None:
        raise ValueError("not a portable StableHLO artifact")
    return module


def portable_artifact_text(data: bytes, *, debug_info: bool = True) -> str:
    """The module in a portable artifact as text; with locations when `debug_info`."""
    module = portable_artifact_module(data)
    out = io.StringIO()
    module.operation.print(file=out, enable_debug_info=debug_info)
    return out.getvalue()


def portable_artifact_mismatch(
    data: bytes,
    in_avals: Sequence[AbstractValue],
    out_avals: Sequence[AbstractValue],
    platform_index: bool,
) -> str | None:
    """How the `@main` of a portable artifact differs from taking `in_avals` (after a
    platform index, if `platform_index`) and returning `out_avals`; None if it does not (or
    if `data` is no artifact: the text says so)."""
    try:
        module = portable_artifact_module(data)
    except ValueError as err:
        return str(err)
    table = ir.SymbolTable(module.operation)
    if "main" not in table:
        return "it has no @main"
    with module.context, ir.Location.unknown():
        caches = ContextCaches(module.context)
        function_type = ir.FunctionType(
            ir.TypeAttr(table["main"].attributes["function_type"]).value
        )
        expected_in = [aval_to_ir_type(caches, a) for a in in_avals]
        if platform_index:
            expected_in.insert(0, ir.RankedTensorType.get([], ir.IntegerType.get_signless(32)))
        expected_out = [aval_to_ir_type(caches, a) for a in out_avals]
        for what, got, want in (
            ("parameters", list(function_type.inputs), expected_in),
            ("results", list(function_type.results), expected_out),
        ):
            if got != want:
                return f"@main's {what} are ({_types(got)}), expected ({_types(want)})"
    return None


def _types(types: Sequence[ir.Type]) -> str:
    return ", ".join(str(t) for t in types)


def custom_call_targets(data: bytes) -> list[tuple[str, str]]:
    """Each `stablehlo.custom_call` in a portable artifact: its target, and the op as text
    with its location (for error messages)."""
    found: list[tuple[str, str]] = []

    def walk(op: ir.Operation) -> None:
        if op.name == "stablehlo.custom_call":
            target = ir.StringAttr(op.attributes["call_target_name"]).value
            found.append((target, f"{op} at {op.location}"))
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    walk(inner.operation)

    walk(portable_artifact_module(data).operation)
    return found


def call_portable_artifact(
    ctx: LoweringRuleContext,
    data: bytes,
    name: str,
    args: Sequence[IrValue],
    *,
    platform_index: int | None = None,
) -> list[IrValue]:
    """Call the `@main` of a portable artifact from the function being lowered.

    The artifact's functions are merged into the module once per module (later calls reuse
    them), its `@main` renamed after `name`. The results have the types `ctx.avals_out` gives.

    Args:
        ctx: the calling equation's context.
        data: the artifact.
        name: the name hint for the merged `@main`, e.g. `call_exported_f`.
        args: what `@main` takes after the platform index: tokens, constants, arguments.
        platform_index: the value to pass as the leading platform index argument, or None when
            `@main` takes none.
    """
    mctx = ctx.module_context
    key = ("portable artifact", data)
    symbol = mctx.functions.get(key)
    if symbol is None:
        symbol = mctx.functions[key] = _merge(mctx.module, mctx.symbol_table, name, data)
    leading: list[IrValue] = []
    if platform_index is not None:
        index_aval_type = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
        attr = ir.DenseElementsAttr.get_splat(
            index_aval_type, ir.IntegerAttr.get(ir.IntegerType.get_signless(32), platform_index)
        )
        leading.append(
            _hlo.emit1("stablehlo.constant", index_aval_type, attributes={"value": attr})
        )
    out_types = [mctx.ir_type(a) for a in ctx.avals_out]
    callee_type = mctx.symbol_table[symbol].attributes["function_type"]
    callee = ir.FunctionType(ir.TypeAttr(callee_type).value)
    given = [*leading, *args]
    if list(callee.results) == out_types and [x.type for x in given] == list(callee.inputs):
        return call(symbol, out_types, given)
    # Exported with symbolic shapes and called with concrete ones (JAX's way): the arguments
    # are converted to the callee's dynamic types and the results back; shape refinement of
    # the whole module then makes every type static again (`refine_shapes`).
    mctx.module.operation.attributes[_dynamic.REFINE_ATTR] = ir.BoolAttr.get(True)
    converted = [
        x if x.type == t else _hlo.emit1("stablehlo.convert", t, x)
        for x, t in zip(given, callee.inputs, strict=True)
    ]
    results = call(symbol, list(callee.results), converted)
    return [
        r if r.type == t else _hlo.emit1("stablehlo.convert", t, r)
        for r, t in zip(results, out_types, strict=True)
    ]


def _merge(dst: ir.Module, dst_table: ir.SymbolTable, name: str, data: bytes) -> str:
    """Move the artifact's functions into `dst`, private and renamed apart from `dst`'s
    symbols; return the new name of its `@main`."""
    main = merge_modules(dst, name, _deserialize(dst.context, data), dst_table)
    entry = dst_table[main]
    for attr in _CALLEE_ATTRS:
        if attr in entry.attributes:
            del entry.attributes[attr]
    return main
