"""`closure_convert` and `custom_gradient`: functions whose closures hold traced values,
turned into functions of explicit arguments, as `jax.closure_convert` / `jax.custom_gradient`.

Both trace the function once to a jaxpr: the values it closes over become that jaxpr's
constants, and the ones that are tracers (which a derivative may perturb) are handed back
as arguments so that custom rules can see them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lamina_core.custom_derivatives._vjp import custom_vjp
from lamina_core.interpreters import trace_to_jaxpr
from lamina_core.ir import AbstractValue, ClosedJaxpr
from lamina_core.trace import Tracer, eval_jaxpr, typeof
from lamina_core.tree import tree_util


def _trace_flat(
    fun: Callable[..., Any], in_tree: tree_util.PyTreeDef, in_avals: Sequence[AbstractValue]
) -> tuple[ClosedJaxpr, tree_util.PyTreeDef]:
    """`fun` (of the pytree arguments `in_tree` describes) traced for `in_avals`."""
    out_trees: list[tree_util.PyTreeDef] = []

    def flat_fun(*leaves: Any) -> list[Any]:
        args = tree_util.tree_unflatten(in_tree, leaves)
        outs, out_tree = tree_util.tree_flatten(fun(*args))
        out_trees.append(out_tree)
        return outs

    closed = trace_to_jaxpr(flat_fun, in_avals)
    return closed, out_trees[0]


def closure_convert(
    fun: Callable[..., Any], *example_args: Any
) -> tuple[Callable[..., Any], list[Any]]:
    """`fun` as a function of its arguments followed by the traced values it closes over, and
    those values. Values that are not tracers stay closed over (no derivative reaches them)."""
    leaves, in_tree = tree_util.tree_flatten(example_args)
    closed, out_tree = _trace_flat(fun, in_tree, [typeof(x) for x in leaves])
    consts = list(closed.consts)
    hoisted_at = [i for i, c in enumerate(consts) if isinstance(c, Tracer)]
    hoisted = [consts[i] for i in hoisted_at]

    def converted_fun(*args_and_consts: Any) -> Any:
        split = len(args_and_consts) - len(hoisted)
        args, given = args_and_consts[:split], args_and_consts[split:]
        merged = list(consts)
        for i, value in zip(hoisted_at, given, strict=True):
            merged[i] = value
        flat, in_tree2 = tree_util.tree_flatten(tuple(args))
        if in_tree != in_tree2:
            raise TypeError(
                "The inputs to the closure produced by closure_convert must have the same "
                "Pytree structure as the example arguments passed when closure_convert was "
                f"called. Expected {in_tree}, but got {in_tree2}"
            )
        return tree_util.tree_unflatten(out_tree, eval_jaxpr(closed.jaxpr, merged, *flat))

    return converted_fun, hoisted


@tree_util.register_pytree_node_class
class _GradientRule:
    """`custom_gradient`'s residuals: the traced gradient rule, its constants as the leaves."""

    def __init__(
        self,
        closed: ClosedJaxpr,
        in_tree: tree_util.PyTreeDef,
        out_tree: tree_util.PyTreeDef,
        consts: Sequence[Any],
    ) -> None:
        self.closed, self.in_tree, self.out_tree = closed, in_tree, out_tree
        self.consts = list(consts)

    def tree_flatten(self) -> tuple[list[Any], tuple[Any, ...]]:
        return self.consts, (self.closed, self.in_tree, self.out_tree)

    @classmethod
    def tree_unflatten(cls, aux: tuple[Any, ...], consts: Sequence[Any]) -> _GradientRule:
        closed, in_tree, out_tree = aux
        return cls(closed, in_tree, out_tree, consts)


def custom_gradient(fun: Callable[..., tuple[Any, Callable[..., Any]]]) -> Callable[..., Any]:
    """`fun` returns `(output, rule)`; the result computes `output` and differentiates (reverse
    mode) by `rule`, which maps the output's cotangent to a tuple of the inputs' cotangents."""

    @custom_vjp
    def wrapped_fun(*args: Any) -> Any:
        return fun(*args)[0]

    def fwd(*args: Any) -> tuple[Any, _GradientRule]:
        ans, rule = fun(*args)
        ans_leaves, ans_tree = tree_util.tree_flatten((ans,))
        avals = [typeof(x).to_tangent_aval() for x in ans_leaves]
        closed, in_tree = _trace_flat(rule, ans_tree, avals)
        return ans, _GradientRule(closed, in_tree, ans_tree, closed.consts)

    def bwd(res: _GradientRule, cts: Any) -> tuple[Any, ...]:
        cts_leaves, cts_tree = tree_util.tree_flatten((cts,))
        if res.out_tree != cts_tree:
            raise TypeError(f"{res.out_tree}\n!=\n{cts_tree}")
        outs = eval_jaxpr(res.closed.jaxpr, res.consts, *cts_leaves)
        result = tree_util.tree_unflatten(res.in_tree, outs)
        return (result,) if tree_util.treedef_is_leaf(res.in_tree) else tuple(result)

    wrapped_fun.defvjp(fwd, bwd)
    return wrapped_fun
