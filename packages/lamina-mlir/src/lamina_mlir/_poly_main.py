"""The entry point of a module exported with symbolic shapes, as JAX writes it.

The lowered `@main` takes the dimension variables first (`{jax.global_constant = "b"}`). An
exported module's public `@main` takes the arrays only: it reads each variable from the shape
of an argument (`stablehlo.get_dimension_size`), asserts what the specification promises
(every variable is at least 1: a `shape_assertion` custom call, which shape refinement checks
and removes), and calls the lowered function, renamed `_wrapped_jax_export_main`.

Each value is computed as JAX computes it, afresh wherever it is used (a traced computation
lowered in place, see `_dim_eval`): `2*b` is `divmod(size, 2)[0]`, a call of `@divmod`, for
the check, for each error message and for the call.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir

from lamina_core.ir import DimExpr, is_symbolic_dim
from lamina_mlir import _dim_eval, _dynamic, _hlo
from lamina_mlir._context import LoweringParameters, ModuleContext
from lamina_mlir._functions import call
from lamina_mlir._mlir_context import ContextCaches

Piece = tuple[Any, Callable[[], Any]]
"""A value an error message shows: a key (equal keys show one value) and how to compute it."""
Text = list[str | Piece]
"""A message: text, and values shown at their places (`{0}` placeholders)."""

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


def _assert(
    caches: ContextCaches,
    pred: Any,
    what: Text,
    spec: str,
    obtained: list[Text],
    mismatch: str = "the polymorphic shapes specification",
) -> None:
    """A `shape_assertion` of `pred`, JAX's message: `what`, then the variables solved so
    far; each value shown is computed afresh, once per assertion (JAX's)."""
    pieces: Text = [
        f"Input shapes do not match {mismatch}. ",
        *what,
        f" Using the following polymorphic shapes specifications: {spec}."
        " Obtained dimension variables: ",
        *(p for entry in obtained for p in entry),
        f". {_HELP}",
    ]
    operands: list[Any] = []
    slots: dict[Any, str] = {}
    texts = []
    for piece in pieces:
        if isinstance(piece, str):
            texts.append(piece)
            continue
        key, compute = piece
        if key not in slots:
            slots[key] = f"{{{len(operands)}}}"
            operands.append(compute())
        texts.append(slots[key])
    with ir.Location.name("shape_assertion"):
        _hlo.emit(
            "stablehlo.custom_call",
            [],
            [pred, *operands],
            {
                "call_target_name": ir.StringAttr.get("shape_assertion"),
                "api_version": _hlo.i32_attr(caches, 2),
                "error_message": ir.StringAttr.get("".join(texts)),
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
    module: ir.Module,
    in_avals: Sequence[Any],
    n_leading: int,
    descriptions: Sequence[str],
    platform_index: bool = False,
) -> None:
    """Rename `@main` (which takes the dimension variables first) and add a public `@main`
    that computes them from its arguments' shapes and calls it.

    Args:
        module: the module (its context active).
        in_avals: the types of the real arguments.
        n_leading: how many arguments (tokens, constants) come before the real ones.
        descriptions: each real argument as JAX names it in errors (`args[0]`).
        platform_index: the public `@main` takes a leading platform index first (exported
            for several platforms), not passed on: Lamina lowers the same ops for all.
    """
    dim_vars = _dynamic.dimension_variables(in_avals)
    table = ir.SymbolTable(module.operation)
    old = table["main"]
    old.attributes["sym_visibility"] = ir.StringAttr.get("private")
    table.set_symbol_name(old, "_wrapped_jax_export_main")
    inner = ir.FunctionType(ir.TypeAttr(old.attributes["function_type"]).value)
    in_types = list(inner.inputs)[len(dim_vars) :]
    arg_attrs: list[ir.Attribute] = [ir.DictAttr.get({}) for _ in in_types]
    if "arg_attrs" in old.attributes:
        arg_attrs = list(ir.ArrayAttr(old.attributes["arg_attrs"]))[len(dim_vars) :]
    if platform_index:
        in_types = [ir.RankedTensorType.get([], ir.IntegerType.get_signless(32)), *in_types]
        index: dict[str, ir.Attribute] = {
            "jax.global_constant": ir.StringAttr.get("_platform_index")
        }
        arg_attrs = [ir.DictAttr.get(index), *arg_attrs]
    attributes: dict[str, ir.Attribute] = {
        "sym_name": ir.StringAttr.get("main"),
        "function_type": ir.TypeAttr.get(ir.FunctionType.get(in_types, list(inner.results))),
        "sym_visibility": ir.StringAttr.get("public"),
    }
    if "arg_attrs" in old.attributes or platform_index:
        attributes["arg_attrs"] = ir.ArrayAttr.get(arg_attrs)
    if "res_attrs" in old.attributes:
        attributes["res_attrs"] = old.attributes["res_attrs"]
    with ir.InsertionPoint.at_block_begin(module.body):
        main = ir.Operation.create("func.func", attributes=attributes, regions=1)
    entry = main.regions[0].blocks.append(*in_types)
    caches = ContextCaches(module.context)
    # The helper functions of this computation (`@divmod`) mark their arguments as global
    # constants (JAX's `global_constant_computation`).
    mctx = ModuleContext(
        caches=caches,
        module=module,
        symbol_table=table,
        lowering_parameters=LoweringParameters(
            hoist_constants_as_args=False, global_constant_computation=True
        ),
        name_stack="",
    )
    args = list(entry.arguments)[1 if platform_index else 0 :]
    real = args[n_leading:]
    spec = _specification(in_avals, descriptions)
    with ir.InsertionPoint(entry):
        _solve(mctx, real, in_avals, descriptions, spec, dim_vars, inner, args)


def _solve(
    mctx: ModuleContext,
    real: Sequence[Any],
    in_avals: Sequence[Any],
    descriptions: Sequence[str],
    spec: str,
    dim_vars: Sequence[str],
    inner: Any,
    args: Sequence[Any],
) -> None:
    """The body of the public `@main`: read the sizes, solve and check, call."""
    caches = mctx.caches
    dtype = _dynamic.dim_dtype()
    scope = next(d.scope for a in in_avals for d in getattr(a, "shape", ()) if is_symbolic_dim(d))
    sizes: dict[str, Any] = {}  # the size of each symbolic axis, by its name
    solutions: dict[str, Any] = {}  # each variable, as an expression in the sizes
    obtained: list[Text] = []  # each solved variable, as the error messages show it

    def size_of(i: int, axis: int) -> Any:
        """The axis's size, an expression (a variable named after the axis)."""
        name = f"{descriptions[i]}.shape[{axis}]"
        if name not in sizes:
            with ir.Location.name("dimension_size"):
                size = _hlo.emit1(
                    "stablehlo.get_dimension_size",
                    ir.RankedTensorType.get([], ir.IntegerType.get_signless(32)),
                    real[i],
                    attributes={"dimension": _hlo.i64_attr(caches, axis)},
                )
                if dtype != np.dtype(np.int32):
                    size = _hlo.convert(caches, size, (), dtype)
            sizes[name] = size
        return DimExpr.variable(name, scope)

    def value(e: Any) -> Any:
        """Emit the computation of `e` (an expression in the sizes), as JAX's."""
        names = list(sizes)

        def compute(*traced: Any) -> list[Any]:
            return [_dim_eval.evaluate(e, lambda name: traced[names.index(name)])]

        return _dim_eval.lower_traced(mctx, compute, [sizes[n] for n in names])[0]

    def piece(e: Any) -> Piece:
        """`e` shown in a message: equal expressions show one value (JAX's)."""
        return (e, functools.partial(value, e))

    def in_sizes(d: Any) -> Any:
        """`d` with each variable replaced by its solution (JAX's substitution)."""
        return d.evaluate(solutions)

    def check(pred: Any, what: Text, mismatch: str | None = None) -> None:
        if mismatch is None:
            _assert(caches, pred, what, spec, obtained)
        else:
            _assert(caches, pred, what, spec, obtained, mismatch)

    def compare(x: Any, y: int, direction: str) -> Any:
        with ir.Location.name(direction.lower()):
            return _hlo.compare(
                caches, x, _hlo.scalar_constant(caches, y, dtype), direction, "SIGNED"
            )

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
        solution, remainder = divmod(size - const, coeff)
        solutions[var] = solution
        if is_symbolic_dim(remainder):
            exact = compare(value(remainder), 0, "EQ")
            what: Text = ["Division had remainder ", piece(remainder)]
            check(exact, [*what, f" when computing the value of '{var}'."])
        positive = compare(value(solution), 1, "GE")
        where = f"{descriptions[i]}.shape[{axis}]"
        obtained.append(
            [
                f"'{var}' = ",
                piece(solution),
                f" from specification '{d}' for dimension {where} (= ",
                piece(size),
                "), ",
            ]
        )
        check(positive, [f"Expected value >= 1 for dimension variable '{var}'."])
    for text, diff in scope.constraints:  # each constraint of the scope: `diff >= 0`
        if not is_symbolic_dim(diff):
            continue
        found = in_sizes(diff)
        holds = compare(value(found), 0, "GE")
        what = [f"Expected '{diff}' to be greater or equal to 0, but found ", piece(found), ". "]
        check(holds, what, f"the symbolic shape constraint {text}")
    for i, aval in enumerate(in_avals):
        for axis, d in enumerate(getattr(aval, "shape", ())):
            if not is_symbolic_dim(d) or (i, axis) in defining:
                continue
            size, expected = size_of(i, axis), in_sizes(d)
            left, right = value(size), value(expected)
            with ir.Location.name("eq"):
                same = _hlo.compare(caches, left, right, "EQ", "SIGNED")
            check(
                same,
                [
                    "Found inconsistency between dimension size "
                    f"{descriptions[i]}.shape[{axis}] (= ",
                    piece(size),
                    f") and the specification '{d}' (= ",
                    piece(expected),
                    ").",
                ],
            )
    values = [value(solutions[v]) for v in dim_vars]
    results = call("_wrapped_jax_export_main", list(inner.results), [*values, *args])
    _hlo.emit("func.return", [], results)
