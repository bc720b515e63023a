"""The entry point of a module exported with symbolic shapes, as JAX writes it.

The lowered `@main` takes the dimension variables first (`{jax.global_constant = "b"}`). An
exported module's public `@main` takes the arrays only: it reads each variable from the shape
of an argument (`stablehlo.get_dimension_size`), asserts what the specification promises
(every variable is at least 1: a `shape_assertion` custom call, which shape refinement checks
and removes), and calls the lowered function, renamed `_wrapped_jax_export_main`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir

from lamina_core.ir import is_symbolic_dim
from lamina_mlir import _dynamic, _hlo
from lamina_mlir._functions import call
from lamina_mlir._mlir_context import ContextCaches

_HELP = (
    "Please see https://docs.jax.dev/en/latest/export/shape_poly.html#shape-assertion-errors "
    "for more details."
)


def _where_defined(var: str, in_avals: Sequence[Any]) -> tuple[int, int, Any]:
    """The first (argument, axis, specification) whose size is linear in the variable alone."""
    for i, aval in enumerate(in_avals):
        for axis, d in enumerate(getattr(aval, "shape", ())):
            if is_symbolic_dim(d) and d.linear_variable()[0] == var:
                return i, axis, d
    raise NotImplementedError(
        f"export: the dimension variable {var!r} is not the size of an argument axis linear "
        f"in it alone (argument shapes: "
        f"{', '.join(str(getattr(a, 'shape', ())) for a in in_avals)}); Lamina solves only "
        "such specifications"
    )


def _sub(caches: ContextCaches, x: Any, c: int) -> Any:
    return _hlo.emit1(
        "stablehlo.subtract", x.type, x, _hlo.scalar_constant(caches, c, _dynamic.dim_dtype())
    )


def _assert_constraints(
    caches: ContextCaches,
    in_avals: Sequence[Any],
    spec: str,
    obtained: list[tuple[str, list[Any]]],
) -> None:
    """An assertion of each constraint of the symbolic scope (`diff >= 0`), as JAX's."""
    scope = next(d.scope for a in in_avals for d in getattr(a, "shape", ()) if is_symbolic_dim(d))
    for text, diff in scope.constraints:
        if not is_symbolic_dim(diff):
            continue
        value = _dynamic.eval_dim(caches, diff)
        zero = _hlo.scalar_constant(caches, 0, _dynamic.dim_dtype())
        with ir.Location.name("ge"):
            holds = _hlo.compare(caches, value, zero, "GE", "SIGNED")
        _assert(
            caches,
            holds,
            f"Expected '{diff}' to be greater or equal to 0, but found {{0}}. ",
            [value],
            spec,
            obtained,
            mismatch=f"the symbolic shape constraint {text}",
        )


def _assert(
    caches: ContextCaches,
    pred: Any,
    what: str,
    inputs: list[Any],
    spec: str,
    obtained: list[tuple[str, list[Any]]],
    mismatch: str = "the polymorphic shapes specification",
) -> None:
    """A `shape_assertion` of `pred`, JAX's message: `what`, then the variables solved so
    far, their values among the message's inputs (`{k}` placeholders)."""
    operands = list(inputs)
    texts = []
    for entry, values in obtained:
        slots = []
        for v in values:  # an operand already passed is referred to again, not repeated
            found = next((k for k, o in enumerate(operands) if o == v), None)
            if found is None:
                found = len(operands)
                operands.append(v)
            slots.append(f"{{{found}}}")
        texts.append(entry.format(*slots))
    message = (
        f"Input shapes do not match {mismatch}. "
        f"{what} Using the following polymorphic shapes specifications: {spec}. "
        f"Obtained dimension variables: {''.join(texts)}. {_HELP}"
    )
    with ir.Location.name("shape_assertion"):
        _hlo.emit(
            "stablehlo.custom_call",
            [],
            [pred, *operands],
            {
                "call_target_name": ir.StringAttr.get("shape_assertion"),
                "api_version": _hlo.i32_attr(caches, 2),
                "error_message": ir.StringAttr.get(message),
                "has_side_effect": ir.BoolAttr.get(True),
            },
        )


def _shape_text(shape: Sequence[Any]) -> str:
    return f"({', '.join(map(str, shape))}{',' if len(shape) == 1 else ''})"


def _specification(in_avals: Sequence[Any], descriptions: Sequence[str]) -> str:
    return ",".join(
        f"{d}.shape = {_shape_text(getattr(a, 'shape', ()))}"
        for a, d in zip(in_avals, descriptions, strict=True)
        if any(is_symbolic_dim(x) for x in getattr(a, "shape", ()))
    )


def add_dim_var_main(
    module: ir.Module, in_avals: Sequence[Any], n_leading: int, descriptions: Sequence[str]
) -> None:
    """Rename `@main` (which takes the dimension variables first) and add a public `@main`
    that computes them from its arguments' shapes and calls it.

    Args:
        module: the module (its context active).
        in_avals: the types of the real arguments.
        n_leading: how many arguments (tokens, constants) come before the real ones.
        descriptions: each real argument as JAX names it in errors (`args[0]`).
    """
    dim_vars = _dynamic.dimension_variables(in_avals)
    table = ir.SymbolTable(module.operation)
    old = table["main"]
    old.attributes["sym_visibility"] = ir.StringAttr.get("private")
    table.set_symbol_name(old, "_wrapped_jax_export_main")
    inner = ir.FunctionType(ir.TypeAttr(old.attributes["function_type"]).value)
    in_types = list(inner.inputs)[len(dim_vars) :]
    attributes: dict[str, ir.Attribute] = {
        "sym_name": ir.StringAttr.get("main"),
        "function_type": ir.TypeAttr.get(ir.FunctionType.get(in_types, list(inner.results))),
        "sym_visibility": ir.StringAttr.get("public"),
    }
    if "arg_attrs" in old.attributes:
        attributes["arg_attrs"] = ir.ArrayAttr.get(
            list(ir.ArrayAttr(old.attributes["arg_attrs"]))[len(dim_vars) :]
        )
    if "res_attrs" in old.attributes:
        attributes["res_attrs"] = old.attributes["res_attrs"]
    with ir.InsertionPoint.at_block_begin(module.body):
        main = ir.Operation.create("func.func", attributes=attributes, regions=1)
    entry = main.regions[0].blocks.append(*in_types)
    caches = ContextCaches(module.context)
    args = list(entry.arguments)
    real = args[n_leading:]
    spec = _specification(in_avals, descriptions)
    with ir.InsertionPoint(entry):
        dtype = _dynamic.dim_dtype()
        one = _hlo.scalar_constant(caches, 1, dtype)
        values: dict[str, Any] = {}
        obtained: list[tuple[str, list[Any]]] = []  # each solved variable: text, its inputs
        sizes: dict[tuple[int, int], Any] = {}

        def size_of(i: int, axis: int) -> Any:
            if (i, axis) not in sizes:
                with ir.Location.name("dimension_size"):
                    size = _hlo.emit1(
                        "stablehlo.get_dimension_size",
                        ir.RankedTensorType.get([], ir.IntegerType.get_signless(32)),
                        real[i],
                        attributes={"dimension": _hlo.i64_attr(caches, axis)},
                    )
                    if dtype != np.dtype(np.int32):
                        size = _hlo.convert(caches, size, (), dtype)
                sizes[i, axis] = size
            return sizes[i, axis]

        def check(pred: Any, what: str, inputs: list[Any]) -> None:
            _assert(caches, pred, what, inputs, spec, obtained)

        for i, aval in enumerate(in_avals):  # JAX reads every symbolic axis first
            for axis, d in enumerate(getattr(aval, "shape", ())):
                if is_symbolic_dim(d):
                    size_of(i, axis)
        defining: set[tuple[int, int]] = set()
        for var in dim_vars:
            i, axis, d = _where_defined(var, in_avals)
            defining.add((i, axis))
            size = size_of(i, axis)
            _, coeff, const = d.linear_variable()
            where = f"{descriptions[i]}.shape[{axis}]"
            if (coeff, const) == (1, 0):
                value, inputs = size, [size]
                entry = (
                    f"'{var}' = {{0}} from specification '{d}' for dimension {where} (= {{0}}), "
                )
            else:
                shifted = _sub(caches, size, const) if const else size
                divisor = _hlo.scalar_constant(caches, coeff, dtype)
                value = _hlo.emit1("stablehlo.divide", shifted.type, shifted, divisor)
                rest = _hlo.emit1("stablehlo.remainder", shifted.type, shifted, divisor)
                zero = _hlo.scalar_constant(caches, 0, dtype)
                with ir.Location.name("eq"):
                    exact = _hlo.compare(caches, rest, zero, "EQ", "SIGNED")
                check(
                    exact,
                    f"Division had remainder {{0}} when computing the value of '{var}'.",
                    [rest],
                )
                inputs = [value, size]
                entry = (
                    f"'{var}' = {{0}} from specification '{d}' for dimension {where} (= {{1}}), "
                )
            with ir.Location.name("ge"):
                positive = _hlo.compare(caches, value, one, "GE", "SIGNED")
            obtained.append((entry, inputs))
            check(positive, f"Expected value >= 1 for dimension variable '{var}'.", [])
            values[var] = value
        with _dynamic.dimension_values(values):
            _assert_constraints(caches, in_avals, spec, obtained)
            for i, aval in enumerate(in_avals):
                for axis, d in enumerate(getattr(aval, "shape", ())):
                    if not is_symbolic_dim(d) or (i, axis) in defining:
                        continue
                    size = size_of(i, axis)
                    expected = _dynamic.eval_dim(caches, d)
                    with ir.Location.name("eq"):
                        same = _hlo.compare(caches, size, expected, "EQ", "SIGNED")
                    check(
                        same,
                        f"Found inconsistency between dimension size "
                        f"{descriptions[i]}.shape[{axis}] (= {{0}}) and the specification "
                        f"'{d}' (= {{1}}).",
                        [size, expected],
                    )
        solved = [values[v] for v in dim_vars]
        results = call("_wrapped_jax_export_main", list(inner.results), [*solved, *args])
        _hlo.emit("func.return", [], results)
