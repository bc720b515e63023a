"""`@main` without token arguments, for a caller that has no tokens to pass.

A module with ordered effects takes and returns one `!stablehlo.token` per effect (JAX's
text). `tokens_made_inside` gives a copy whose public `@main` takes only the other arguments:
it makes the tokens with `stablehlo.create_token`, calls the original entry (now a private
function) and drops the tokens it returns. Within one run, the ordered effects still happen
in program order, threaded on those tokens.
"""

from __future__ import annotations

import dataclasses

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from lamina_mlir import _hlo
from lamina_mlir._module import LoweredModule

_INNER = "main_with_tokens"


def _token_count(main: ir.Operation) -> int:
    if "arg_attrs" not in main.attributes:
        return 0
    count = 0
    for attrs in ir.ArrayAttr(main.attributes["arg_attrs"]):
        if "jax.token" not in ir.DictAttr(attrs):
            break
        count += 1
    return count


def _main(module: ir.Module) -> ir.Operation:
    for op in module.body.operations:
        fn = op.operation
        if fn.name == "func.func" and ir.StringAttr(fn.attributes["sym_name"]).value == "main":
            return fn
    raise ValueError("tokens_made_inside: the module has no @main")


def _shifted(attrs: ir.Attribute, n: int) -> ir.Attribute:
    """An argument's attributes with its output alias moved down past `n` token results."""
    given = ir.DictAttr(attrs)
    entries = {given[i].name: given[i].attr for i in range(len(given))}
    alias = entries.get("tf.aliasing_output")
    if alias is not None:
        value = ir.IntegerAttr(alias).value - n
        entries["tf.aliasing_output"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), value)
    return ir.DictAttr.get(entries)


def tokens_made_inside(lowered: LoweredModule) -> LoweredModule:
    """`lowered` itself if its `@main` takes no tokens, else a copy whose `@main` makes them."""
    n = _token_count(_main(lowered.module))
    if n == 0:
        return lowered
    with lowered.context, ir.Location.unknown():
        module = ir.Module.parse(str(lowered.module.operation.get_asm(enable_debug_info=True)))
        inner = _main(module)
        inner.attributes["sym_name"] = ir.StringAttr.get(_INNER)
        inner.attributes["sym_visibility"] = ir.StringAttr.get("private")
        fn_type = ir.FunctionType(ir.TypeAttr(inner.attributes["function_type"]).value)
        ins, outs = list(fn_type.inputs), list(fn_type.results)
        main_type = ir.FunctionType.get(ins[n:], outs[n:])
        attributes = {
            "sym_name": ir.StringAttr.get("main"),
            "function_type": ir.TypeAttr.get(main_type),
            "sym_visibility": ir.StringAttr.get("public"),
        }
        arg_attrs = list(ir.ArrayAttr(inner.attributes["arg_attrs"]))[n:]
        attributes["arg_attrs"] = ir.ArrayAttr.get([_shifted(a, n) for a in arg_attrs])
        if "res_attrs" in inner.attributes:
            attributes["res_attrs"] = ir.ArrayAttr.get(
                list(ir.ArrayAttr(inner.attributes["res_attrs"]))[n:]
            )
        for name in ("mhlo.sharding", "jax.uses_shape_polymorphism"):
            if name in inner.attributes:
                attributes[name] = inner.attributes[name]
        with ir.InsertionPoint(module.body):
            main = ir.Operation.create("func.func", attributes=attributes, regions=1)
        entry = main.regions[0].blocks.append(*ins[n:])
        with ir.InsertionPoint(entry):
            tokens = [hlo.create_token() for _ in range(n)]
            call = _hlo.emit(
                "func.call",
                outs,
                [*tokens, *entry.arguments],
                {"callee": ir.FlatSymbolRefAttr.get(_INNER)},
            )
            _hlo.return_(list(call.results)[n:], "func.return")
    return dataclasses.replace(lowered, module=module)
