"""`custom_vmap` and `sequential_vmap`, as JAX's `jax.custom_batching`.

A `custom_vmap` function binds `custom_vmap_call`, whose `call` is the function traced for
the arguments' types (closed-over values become leading operands). Outside vmap the call
evaluates its jaxpr; under vmap the user's rule runs instead, on the operands with their
mapped axes moved to the front: `rule(axis_size, in_batched, *args) -> (out, out_batched)`.
Forward mode differentiates through the rule as JAX does (the rule's jvp, vmapped over the
axes only one of primal and tangent is mapped along); reverse mode is not supported (JAX
neither).

`sequential_vmap` is a `custom_vmap` whose rule runs the function once per example. JAX
loops with `lax.map` (a `scan`); Lamina's rule indexes each example out, applies the function
and stacks the results (one program, unrolled) with the stack lax installs (`install_stack`).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any, Final

from lamina_core.custom_derivatives._common import fun_name, resolve_args
from lamina_core.interpreters import (
    AxisData,
    BatchDim,
    BatchTrace,
    batching_rules,
    extend_axis_env,
    instantiate_zeros,
    jvp_flat,
    jvp_rules,
    match_axis,
    trace_to_jaxpr,
)
from lamina_core.ir import (
    ClosedJaxpr,
    DebugInfo,
    JaxprEqn,
    PpContext,
    PpSettings,
    Primitive,
    abstract_eval_rules,
    effects_rules,
    impl_rules,
    pp,
    pp_eqn_rules,
    pp_eqn_with_params,
)
from lamina_core.trace import current_trace, eval_jaxpr, running_under, set_current_trace, typeof
from lamina_core.transforms import func_src_info, stage_call
from lamina_core.transforms import jvp as _api_jvp
from lamina_core.tree import tree_util

custom_vmap_p: Final = Primitive("custom_vmap_call", multiple_results=True)


@abstract_eval_rules.register(custom_vmap_p)
def _abstract_eval(*args: Any, call: ClosedJaxpr, **_: Any) -> list[Any]:
    return list(call.out_avals)


@effects_rules.register(custom_vmap_p)
def _effects(*args: Any, call: ClosedJaxpr, **_: Any) -> Any:
    return call.effects


@impl_rules.register(custom_vmap_p)
def _impl(*args: Any, call: ClosedJaxpr, **_: Any) -> list[Any]:
    return eval_jaxpr(call, (), *args)


class _TreeRepr:
    """A treedef as JAX prints it in params (`PyTreeDef(...)`)."""

    def __init__(self, tree: Any) -> None:
        self.tree = tree

    def __repr__(self) -> str:
        return str(self.tree).replace("PyTreeSpec(", "PyTreeDef(", 1)


class _FunRepr:
    """A function as JAX's printer shows it, its address masked."""

    def __init__(self, fun: Any) -> None:
        self.fun = fun

    def __repr__(self) -> str:
        name = getattr(self.fun, "__qualname__", fun_name(self.fun))
        return f"<function {name} at 0x{'X' * len(format(id(self.fun), 'x'))}>"


def _pp_rule(eqn: JaxprEqn, ctx: PpContext, settings: PpSettings) -> pp.Doc:
    p = eqn.params
    shown = dict(p, in_tree=_TreeRepr(p["in_tree"]), out_tree=_TreeRepr(p["out_tree"]))
    shown["rule"] = _FunRepr(getattr(p["rule"], "rule", p["rule"]))
    return pp_eqn_with_params(
        eqn.replace(params=shown), ctx, settings, ["call", "in_tree", "out_tree", "rule"]
    )


pp_eqn_rules.set(custom_vmap_p, _pp_rule)


class _ClosedRule:
    """The user's rule as the call carries it: it drops the (never batched) consts."""

    def __init__(self, rule: Callable[..., Any]) -> None:
        self.rule = rule

    def __call__(self, axis_size: int, all_in_batched: Any, *all_args: Any) -> Any:
        _, args = all_args
        consts_batched, in_batched = all_in_batched
        if any(tree_util.tree_leaves(consts_batched)):
            raise NotImplementedError("vmap of a custom_vmap function closing over a batched value")
        return _call_rule(self.rule, axis_size, in_batched, args)


def _call_rule(rule: Callable[..., Any], axis_size: int, in_batched: Any, args: Any) -> Any:
    in_batched = in_batched if type(in_batched) is list else list(in_batched)
    return rule(axis_size, in_batched, *args)


def _rule_name(rule: Any) -> str:
    return str(getattr(rule, "__name__", "<unnamed rule>"))


def _check_trees(rule: Any, original: Any, out_tree: Any, batched_tree: Any) -> None:
    def show(t: Any) -> str:
        return str(t).replace("PyTreeSpec(", "PyTreeDef(", 1)

    if out_tree != batched_tree:
        raise ValueError(
            "structure of output value and output batching specification returned by custom "
            f"vmap rule ({_rule_name(rule)}) do not match.\nOutput values: {show(out_tree)}\n"
            f"Batching spec: {show(batched_tree)}"
        )
    if out_tree != original:
        raise ValueError(
            f"structure of output returned by custom vmap rule ({_rule_name(rule)}) does not "
            f"match that of original custom-vmapped function.\nOriginal output: "
            f"{show(original)}\nRule output: {show(out_tree)}"
        )


class custom_vmap:
    """A function whose behaviour under `vmap` is the user's rule (`def_vmap`)."""

    def __init__(self, fun: Callable[..., Any]) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule: Callable[..., Any] | None = None

    def def_vmap(self, vmap_rule: Callable[..., Any]) -> Callable[..., Any]:
        """`vmap_rule(axis_size, in_batched, *args) -> (out, out_batched)`; returned as is."""
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args = resolve_args(self.fun, args, kwargs, "custom_vmap")
        if not self.vmap_rule:
            raise AttributeError(
                f"No batching rule defined for custom_vmap function {fun_name(self.fun)} "
                "using def_vmap."
            )
        leaves, in_tree = tree_util.tree_flatten(args)
        out_trees: list[Any] = []

        def flat(*xs: Any) -> list[Any]:
            out_leaves, out_tree = tree_util.tree_flatten(
                self.fun(*tree_util.tree_unflatten(in_tree, xs))
            )
            out_trees.append(out_tree)
            return out_leaves

        debug = DebugInfo("custom_vmap fun", func_src_info(self.fun))
        closed, consts = stage_call(flat, [typeof(x) for x in leaves], debug)
        call = closed
        full_tree = tree_util.treedef_tuple([tree_util.tree_structure(list(consts)), in_tree])
        outs = custom_vmap_p.bind(
            *consts,
            *leaves,
            call=call,
            rule=_ClosedRule(self.vmap_rule),
            in_tree=full_tree,
            out_tree=out_trees[0],
        )
        return tree_util.tree_unflatten(out_trees[0], outs)


def _front(axis_data: AxisData, x: Any, d: BatchDim) -> Any:
    return x if d is None or d == 0 else match_axis(axis_data, d, 0, x)


def _custom_vmap_batch(
    axis_data: AxisData,
    vals: Sequence[Any],
    dims: Sequence[BatchDim],
    *,
    call: ClosedJaxpr,
    rule: Any,
    in_tree: Any,
    out_tree: Any,
) -> tuple[list[Any], list[BatchDim]]:
    args_flat = [_front(axis_data, x, d) for x, d in zip(vals, dims, strict=True)]
    args = tree_util.tree_unflatten(in_tree, args_flat)
    in_batched = tree_util.tree_unflatten(in_tree, [d is not None for d in dims])
    out, out_batched = _call_rule(rule, axis_data.size, in_batched, args)
    flat_outs, tree1 = tree_util.tree_flatten(out)
    flat_batched, tree2 = tree_util.tree_flatten(out_batched)
    _check_trees(getattr(rule, "rule", rule), out_tree, tree1, tree2)
    return flat_outs, [0 if b else None for b in flat_batched]


batching_rules.set(custom_vmap_p, _custom_vmap_batch)


# --- forward mode --------------------------------------------------------------------------


def _jvp_call(call: ClosedJaxpr) -> ClosedJaxpr:
    n = len(call.in_avals)

    def fun(*args: Any) -> list[Any]:
        ps, ts = jvp_flat(lambda *xs: eval_jaxpr(call, (), *xs), args[:n], args[n:])
        return [*ps, *(instantiate_zeros(t) for t in ts)]

    avals = [*call.in_avals, *(a.to_tangent_aval() for a in call.in_avals)]
    return trace_to_jaxpr(fun, avals, call.jaxpr.debug_info)


def _custom_vmap_jvp(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    call: ClosedJaxpr,
    rule: Any,
    in_tree: Any,
    out_tree: Any,
) -> tuple[list[Any], list[Any]]:
    def jvp_of_rule_rule(axis_size: int, in_batched: Any, ps: Any, ts: Any) -> Any:
        in_batched_ps, in_batched_ts = in_batched
        mutually = tree_util.tree_map(operator.and_, in_batched_ps, in_batched_ts)
        extra_ps = tree_util.tree_map(
            lambda pb, tb: 0 if pb and not tb else None, in_batched_ps, in_batched_ts
        )
        extra_ts = tree_util.tree_map(
            lambda pb, tb: 0 if tb and not pb else None, in_batched_ps, in_batched_ts
        )
        out_mutually: list[Any] = []

        def to_jvp(*xs: Any) -> Any:
            out, out_batched = _call_rule(rule, axis_size, mutually, xs)
            _check_trees(
                getattr(rule, "rule", rule),
                out_tree,
                tree_util.tree_structure(out),
                tree_util.tree_structure(out_batched),
            )
            out_mutually.append(out_batched)
            return out

        def pushed(p: Any, t: Any) -> Any:
            return _api_jvp(to_jvp, tuple(p), tuple(t))

        outs_p, outs_t = _vmap_unrestricted(pushed, (ps, ts), (extra_ps, extra_ts), axis_size)
        out_ps, extra_out_ps = outs_p
        out_ts, extra_out_ts = outs_t
        batched_ps = tree_util.tree_map(operator.or_, out_mutually[0], extra_out_ps)
        batched_ts = tree_util.tree_map(operator.or_, out_mutually[0], extra_out_ts)
        return (out_ps, out_ts), (batched_ps, batched_ts)

    tangents = [instantiate_zeros(t) for t in tangents]
    jvp_in_tree = tree_util.treedef_tuple([in_tree, in_tree])
    jvp_out_tree = tree_util.treedef_tuple([out_tree, out_tree])
    outs = custom_vmap_p.bind(
        *primals,
        *tangents,
        call=_jvp_call(call),
        rule=jvp_of_rule_rule,
        in_tree=jvp_in_tree,
        out_tree=jvp_out_tree,
    )
    n = len(outs) // 2
    return list(outs[:n]), list(outs[n:])


def _vmap_unrestricted(
    fun: Callable[..., Any], args: Any, in_axes: Any, size: int
) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    """`fun(*args)` batched over `in_axes` (a tree prefix of `args` with None leaves), its
    outputs' mapped axes moved to the front; returns `((out_p, p_batched), (out_t,
    t_batched))`."""
    leaves, tree = tree_util.tree_flatten(args)
    dims = tree_util.tree_leaves(in_axes, is_leaf=lambda x: x is None)
    axis_data = AxisData(None, size)
    trace = BatchTrace(current_trace(), axis_data)
    wrapped = [trace.wrap(x, d) for x, d in zip(leaves, dims, strict=True)]
    with set_current_trace(trace), extend_axis_env(axis_data):
        out_p, out_t = fun(*tree_util.tree_unflatten(tree, wrapped))
        p_leaves, p_tree = tree_util.tree_flatten(out_p)
        t_leaves, t_tree = tree_util.tree_flatten(out_t)
        p_info = [trace.to_batch_info(x) for x in p_leaves]
        t_info = [trace.to_batch_info(x) for x in t_leaves]
    with running_under(trace.parent or current_trace()):
        ps = [_front(axis_data, v, d) for v, d in p_info]
        ts = [_front(axis_data, v, d) for v, d in t_info]
    return (
        (
            tree_util.tree_unflatten(p_tree, ps),
            tree_util.tree_unflatten(p_tree, [d is not None for _, d in p_info]),
        ),
        (
            tree_util.tree_unflatten(t_tree, ts),
            tree_util.tree_unflatten(t_tree, [d is not None for _, d in t_info]),
        ),
    )


jvp_rules.set(custom_vmap_p, _custom_vmap_jvp)


# --- sequential_vmap -------------------------------------------------------------------------

Stack = Callable[[Sequence[Any]], Any]
"""`stack(values)`: equally typed arrays joined along a new leading axis. The lax layer
installs it (`lax.stack`): every example's result has the function's output type, so no
promotion is needed."""

_stack: Stack | None = None


def install_stack(stack: Stack) -> None:
    global _stack
    _stack = stack


def sequential_vmap(f: Callable[..., Any]) -> custom_vmap:
    """`f` as a `custom_vmap` whose rule applies `f` to one example at a time.

    JAX loops with `lax.map`; Lamina, without `scan` yet, unrolls the loop: each example is
    indexed out of the batched arguments, `f` applied to it, and the results stacked.
    """
    fun = custom_vmap(f)

    @fun.def_vmap
    def rule(axis_size: int, in_batched: Any, *args: Any) -> Any:
        assert _stack is not None, "import lamina_core.lax to install sequential_vmap's stack"
        leaves, tree = tree_util.tree_flatten(list(args))
        flags = tree_util.tree_leaves(in_batched)
        per_example = []
        for i in range(axis_size):
            xs = [x[i] if b else x for x, b in zip(leaves, flags, strict=True)]
            per_example.append(fun(*tree_util.tree_unflatten(tree, xs)))
        out_leaves = [tree_util.tree_leaves(o) for o in per_example]
        out_tree = tree_util.tree_structure(per_example[0])
        stacked = [_stack(list(col)) for col in zip(*out_leaves, strict=True)]
        out = tree_util.tree_unflatten(out_tree, stacked)
        return out, tree_util.tree_map(lambda _: True, out)

    return fun


__all__ = ["custom_vmap", "custom_vmap_p", "sequential_vmap"]
