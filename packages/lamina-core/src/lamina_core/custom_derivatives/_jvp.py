"""`custom_jvp`: a function whose forward-mode derivative is the user's rule.

Calling it binds `custom_jvp_call` on the function traced for the arguments' types, so
staging records one equation and evaluation runs the jaxpr. Differentiation runs the user's
rule instead (`_custom_jvp_call_jvp`); reverse mode has no rule of its own here: the generic
linearization runs that jvp rule under a `SplitTrace`, which is JAX's `linearize_from_jvp`
(the rule's primal work lands on the primal side, its tangent work is staged).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Final

from lamina_core.custom_derivatives._common import (
    RuleName,
    SymbolicZero,
    bind_call,
    bind_static,
    call_primitive,
    check_primal_outputs,
    for_user,
    from_user_zero,
    fun_name,
    resolve_args,
    strip_weak,
    trace_callee,
    type_str,
)
from lamina_core.interpreters import (
    SplitTrace,
    Zero,
    add_tangents,
    backward_pass,
    is_undefined,
    jvp_rules,
    partial_eval_rules,
    tangents_named_under_whole_stack,
    transpose_rules,
    zero_of,
)
from lamina_core.ir import ClosedJaxpr, types_match
from lamina_core.trace import Tracer, eval_jaxpr, set_current_trace, typeof
from lamina_core.transforms import stop_gradient_p
from lamina_core.tree import tree_util

custom_jvp_call_p: Final = call_primitive(
    "custom_jvp_call", ("call_jaxpr", "jvp", "num_consts", "symbolic_zeros")
)


def _stop_tracers(x: Any) -> Any:
    """A non-differentiable argument: its tracers cut from differentiation, as JAX does."""
    return tree_util.tree_map(lambda v: stop_gradient_p.bind(v) if isinstance(v, Tracer) else v, x)


class custom_jvp:
    """A function with a user-defined forward-mode derivative (`defjvp` or `defjvps`).

    `nondiff_argnums` name arguments that are not differentiated (functions, flags, ...): they
    are passed to the rule first, before the primals and tangents of the others.
    """

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp: Callable[..., Any] | None = None
        self.symbolic_zeros = False

    def defjvp(self, jvp: Callable[..., Any], symbolic_zeros: bool = False) -> Callable[..., Any]:
        """`jvp(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)` is the rule.

        With `symbolic_zeros`, tangents of inputs not being differentiated arrive as
        `SymbolicZero`s (otherwise as arrays of zeros), and the rule may return them too.
        """
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *jvps: Callable[..., Any] | None) -> None:
        """One rule per argument, `jvps[i](g_i, primal_out, *primals)`, summed (None: none)."""
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

        def jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> Any:
            primal_out = self(*primals)
            zeros = tree_util.tree_map(zero_of, primal_out)
            terms = [
                rule(t, primal_out, *primals) if rule else zeros
                for t, rule in zip(tangents, jvps, strict=False)
            ]
            tangent_out = tree_util.tree_map(
                lambda _, x, *xs: functools.reduce(add_tangents, xs, x), primal_out, *terms
            )
            return primal_out, tangent_out

        self.defjvp(jvp)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        primal_name = fun_name(self.fun)
        if self.jvp is None:
            raise AttributeError(
                f"No JVP defined for custom_jvp function {primal_name} using defjvp."
            )
        args = resolve_args(self.fun, args, kwargs, "custom_jvp")
        if self.nondiff_argnums:
            args = tuple(
                _stop_tracers(x) if i in self.nondiff_argnums else x for i, x in enumerate(args)
            )
        fun, dyn = bind_static(self.fun, self.nondiff_argnums, args)
        static = [args[i] for i in self.nondiff_argnums]
        user_jvp = self.jvp

        def rule(primals: Any, tangents: Any) -> Any:
            return user_jvp(*static, primals, tangents)

        rule.__name__ = fun_name(user_jvp)
        traced = trace_callee(fun, dyn, "custom_jvp fun")
        return bind_call(
            custom_jvp_call_p,
            traced,
            {"jvp": RuleName(rule)},
            symbolic_zeros=self.symbolic_zeros,
            fun_name=primal_name,
        )


def _custom_jvp_call_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], **params: Any
) -> tuple[list[Any], list[Any]]:
    # Tangents of closed-over values are not the rule's business (JAX's rule never sees them).
    n = params["num_consts"]
    in_tree = params["in_tree"]
    args = tree_util.tree_unflatten(in_tree, list(primals[n:]))
    ts = tree_util.tree_unflatten(in_tree, for_user(tangents[n:], params["symbolic_zeros"]))
    out = params["jvp"](args, ts)
    p_leaves, t_leaves = _check_rule_output(out, params)
    return p_leaves, [from_user_zero(t) for t in t_leaves]


def _check_rule_output(out: Any, params: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    """The rule's outputs, flat, after JAX's checks of their structure and types."""
    primal_name, jvp_name = params["fun_name"], repr(params["jvp"])
    rule = f"Custom JVP rule {jvp_name} for function {primal_name}"
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(
            f"{rule} must produce a pair (list or tuple of length two) representing primal and "
            f"tangent outputs, but got {out}."
        )
    p_leaves, p_tree = tree_util.tree_flatten(out[0])
    t_leaves, t_tree = tree_util.tree_flatten(
        out[1], is_leaf=lambda x: type(x) in (Zero, SymbolicZero)
    )
    if p_tree != t_tree:
        raise TypeError(
            f"{rule} must produce primal and tangent outputs with equal container (pytree) "
            f"structures, but got {p_tree} and {t_tree} respectively.".replace(
                "PyTreeSpec(", "PyTreeDef("
            )
        )
    # JAX checks the primal outputs against the function's only when it traced the function
    # first (under jit); Lamina always has, and always checks.
    first = (
        f"{rule} must produce a pair (list or tuple of length two) where the first element "
        "represents the primal output (equal in value to the output of the custom_jvp-decorated "
        f"function {primal_name}, "
    )
    leads = (
        first + "and in particular of the same container/pytree structure), but ",
        first + "and in particular with leaves of the same shape/dtype), but ",
    )
    p_avals = check_primal_outputs(
        p_leaves, p_tree, params, kind="custom_jvp", rule="JVP rule", leads=leads
    )
    _check_tangent_types(p_avals, t_leaves)
    return p_leaves, t_leaves


def _check_tangent_types(p_avals: list[Any], t_leaves: list[Any]) -> None:
    primal = [strip_weak(a) for a in p_avals]
    expected = [a.to_tangent_aval() for a in primal]
    got = [strip_weak(t.aval if type(t) in (Zero, SymbolicZero) else typeof(t)) for t in t_leaves]
    if all(map(types_match, expected, got)):
        return
    if len(expected) == 1:
        raise TypeError(
            "Custom JVP rule must produce primal and tangent outputs with corresponding shapes "
            f"and dtypes. Expected {type_str(expected[0])} (tangent type of "
            f"{type_str(primal[0])}) but got {type_str(got[0])}."
        )
    lines = "\n".join(
        f"  primal {type_str(p)} with tangent {type_str(t)}, expecting tangent {type_str(e)}"
        for p, e, t in zip(primal, expected, got, strict=True)
        if e != t
    )
    raise TypeError(
        "Custom JVP rule must produce primal and tangent outputs with corresponding shapes and "
        f"dtypes, but got:\n{lines}"
    )


jvp_rules.set(custom_jvp_call_p, _custom_jvp_call_jvp)
tangents_named_under_whole_stack.add(custom_jvp_call_p)


def _custom_jvp_call_partial_eval(trace: SplitTrace, *args: Any, **params: Any) -> list[Any]:
    # As JAX's: partial evaluation only builds linear functions, which need no custom rule,
    # so a call with some unknown input is inlined (its known part computed now).
    with set_current_trace(trace):
        return eval_jaxpr(params["call_jaxpr"], (), *args)


partial_eval_rules.set(custom_jvp_call_p, _custom_jvp_call_partial_eval)


def _custom_jvp_call_transpose(
    ct: Sequence[Any], *args: Any, call_jaxpr: ClosedJaxpr, **_: Any
) -> list[Any]:
    # Applied to tangents (a rule calling a custom_jvp function on them), the call is linear
    # in them: transpose its jaxpr.
    cts = backward_pass(call_jaxpr.jaxpr, call_jaxpr.consts, list(args), list(ct))
    it = iter(cts)
    return [next(it) if is_undefined(a) else None for a in args]


transpose_rules.set(custom_jvp_call_p, _custom_jvp_call_transpose)

__all__ = ["custom_jvp", "custom_jvp_call_p"]
