"""Argument specs with symbolic dimensions: `symbolic_args_specs`.

The dimension algebra is core's (`lamina_core.ir.DimExpr`, `symbolic_shape`); tracing types
values with it, the lowering passes the dimension variables and uses dynamic ops
(`lamina_mlir._dynamic`), the exported `@main` computes them from its arguments
(`lamina_mlir._poly_main`), and a call reads them from its arguments' shapes (`_solve`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core import tree_util
from lamina_core.ir import SymbolicScope, symbolic_shape
from lamina_core.trace import ShapeDtypeStruct, typeof
from lamina_core.tree import flatten_one_level, is_tree_node


def _spec_per_leaf(specs: Any, args: Any, path: str) -> list[str | None]:
    """`specs`, a prefix of the tree `args`, broadcast to one spec per leaf of `args`."""
    if specs is None or isinstance(specs, str):
        return [specs] * len(tree_util.tree_leaves(args))
    if isinstance(args, tuple) and isinstance(specs, list):
        specs = tuple(specs)  # JAX's leniency: a list of specs for a tuple of arguments
    if not is_tree_node(type(args)) or type(specs) is not type(args):
        raise ValueError(
            f"export.symbolic_args_specs shapes_specs must be a tree prefix of the arguments: "
            f"at {path or 'the top'} the spec is a {type(specs).__name__} and the argument a "
            f"{type(args).__name__}"
        )
    spec_children, spec_meta = flatten_one_level(specs)
    arg_children, arg_meta = flatten_one_level(args)
    if len(spec_children) != len(arg_children) or spec_meta != arg_meta:
        raise ValueError(
            "export.symbolic_args_specs shapes_specs must be a tree prefix of the arguments: "
            f"at {path or 'the top'} the spec has {len(spec_children)} children and the "
            f"argument {len(arg_children)}"
        )
    per_leaf: list[str | None] = []
    for i, (s, a) in enumerate(zip(spec_children, arg_children, strict=True)):
        per_leaf += _spec_per_leaf(s, a, f"{path}[{i}]")
    return per_leaf


def symbolic_args_specs(
    args: Any,
    shapes_specs: Any,
    constraints: Sequence[str] = (),
    scope: SymbolicScope | None = None,
) -> Any:
    """`ShapeDtypeStruct`s for `args`, with the shapes `shapes_specs` gives (as JAX's).

    Args:
        args: a tree of arrays (or anything with a shape and a dtype).
        shapes_specs: a tree prefix of `args` of shape specifications (see
            `symbolic_shape`; `...` and `_` take the argument's own dimensions, None keeps
            its shape).
        constraints: constraints of a new scope shared by all the specs.
        scope: the scope to use instead (not with `constraints`).

    Raises:
        ValueError: `shapes_specs` is not a prefix of `args`, a spec is malformed, or both
            `scope` and `constraints` are given.
    """
    leaves, treedef = tree_util.tree_flatten(args)
    specs = _spec_per_leaf(shapes_specs, args, "")
    if scope is None:
        scope = SymbolicScope(constraints)
    elif constraints:
        raise ValueError("Cannot use both `scope` and `constraints`")
    structs = [
        ShapeDtypeStruct(symbolic_shape(spec, like=np.shape(leaf), scope=scope), _dtype(leaf))
        for leaf, spec in zip(leaves, specs, strict=True)
    ]
    return tree_util.tree_unflatten(treedef, structs)


def _dtype(leaf: Any) -> np.dtype:
    """The dtype an argument has in a trace (float64 is float32 unless x64 is on)."""
    if isinstance(leaf, ShapeDtypeStruct):
        return leaf.dtype
    aval = typeof(leaf)
    return aval.dtype  # type: ignore[attr-defined, no-any-return]  # an array's type
