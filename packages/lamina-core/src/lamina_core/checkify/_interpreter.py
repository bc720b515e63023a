"""The checkify interpreter: runs a jaxpr equation by equation, threading an error value.

`checkify(f)` stages `f` (its arguments closed over, so they stay what they are: values,
or tracers of an enclosing transformation) and interprets the jaxpr under the current trace.
Each equation either rebinds its primitive unchanged, or, if `checkify_rules` has a rule for
it, runs the rule, which may add checks (NaN, out-of-bounds, division) to the error or, for
primitives holding jaxprs, checkify those jaxprs so the error flows through them. The rules
sit beside the primitives' families (`_rules_*` modules); this module names no primitive.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias, TypeVar

from lamina_core.checkify._errors import (
    Error,
    ErrorCategory,
    ErrorEffect,
    FailedCheckError,
    PyTreeDef,
    init_error,
)
from lamina_core.interpreters import trace_to_jaxpr
from lamina_core.ir import (
    AbstractValue,
    ClosedJaxpr,
    DebugInfo,
    Jaxpr,
    Literal,
    RuleTable,
    Var,
    fix_source_info,
    unfix_source_info,
)
from lamina_core.trace import typeof
from lamina_core.transforms import argument_names, func_src_info
from lamina_core.tree import tree_util

Out = TypeVar("Out")
EnabledErrors: TypeAlias = frozenset[ErrorCategory]

CheckifyRule: TypeAlias = Callable[..., tuple[Error, Any]]
"""`rule(error, enabled_errors, *in_values, **params) -> (error, out)`: the equation's result
(a list for multiple-result primitives) and the error updated with what it checked."""

checkify_rules: RuleTable[CheckifyRule] = RuleTable("checkify")

user_checks: EnabledErrors = frozenset({FailedCheckError})


def checkify_jaxpr_flat(
    jaxpr: Jaxpr,
    consts: Sequence[Any],
    enabled_errors: EnabledErrors,
    err_tree: PyTreeDef,
    *args: Any,
) -> tuple[Error, list[Any]]:
    """Interpret `jaxpr` on the error's leaves then its arguments; return the error after it
    and its outputs."""
    n = err_tree.num_leaves
    error: Error = tree_util.tree_unflatten(err_tree, args[:n])
    env: dict[Var, Any] = dict(zip(jaxpr.constvars, consts, strict=True))
    env.update(zip(jaxpr.invars, args[n:], strict=True))

    def read(atom: Any) -> Any:
        return atom.val if type(atom) is Literal else env[atom]

    rules = checkify_rules.rules
    for eqn in jaxpr.eqns:
        prim = eqn.primitive
        ins = [read(a) for a in eqn.invars]
        # What the rule stages comes from the equation's line, as the equation itself did.
        token = fix_source_info(eqn.source_info)
        try:
            rule = rules.get(prim)
            if rule is None:
                out = prim.bind(*ins, **eqn.params)
            else:
                error, out = rule(error, enabled_errors, *ins, **eqn.params)
        finally:
            unfix_source_info(token)
        if prim.multiple_results:
            env.update(zip(eqn.outvars, out, strict=True))
        else:
            env[eqn.outvars[0]] = out
    return error, [read(a) for a in jaxpr.outvars]


def checkify_jaxpr(
    closed: ClosedJaxpr, enabled_errors: EnabledErrors, error: Error, *args: Any
) -> tuple[Error, list[Any]]:
    leaves, tree = tree_util.tree_flatten(error)
    return checkify_jaxpr_flat(closed.jaxpr, closed.consts, enabled_errors, tree, *leaves, *args)


_checked_cache: weakref.WeakKeyDictionary[ClosedJaxpr, dict[Any, Any]] = weakref.WeakKeyDictionary()


def jaxpr_to_checkify_jaxpr(
    closed: ClosedJaxpr,
    enabled_errors: EnabledErrors,
    err_tree: PyTreeDef,
    *in_avals: AbstractValue,
) -> tuple[ClosedJaxpr, PyTreeDef, set[ErrorEffect]]:
    """`closed` checkified as a jaxpr: it takes the error's leaves (of `err_tree`) then the
    arguments (of `in_avals`, error leaves first) and returns the error's leaves then the
    outputs. Also the tree of (error, outputs) and the error's effects.

    Memoized per jaxpr object and arguments: a jaxpr checkified again keeps its check codes.
    """
    entries = _checked_cache.setdefault(closed, {})
    key = (enabled_errors, err_tree, in_avals)
    found = entries.get(key)
    if found is not None:
        return found  # type: ignore[no-any-return]
    trees: list[PyTreeDef] = []
    effects: list[set[ErrorEffect]] = []

    def flat(*args: Any) -> list[Any]:
        error, outs = checkify_jaxpr_flat(
            closed.jaxpr, closed.consts, enabled_errors, err_tree, *args
        )
        effects.append(set(error._pred))
        leaves, tree = tree_util.tree_flatten((error, outs))
        trees.append(tree)
        return leaves

    info = closed.jaxpr.debug_info
    debug = None if info is None else DebugInfo(info.traced_for, info.func_src_info)
    checked = trace_to_jaxpr(flat, in_avals, debug)
    result = checked, trees[0], effects[0]
    entries[key] = result
    return result


def avals_of(values: Sequence[Any]) -> tuple[AbstractValue, ...]:
    return tuple(typeof(v) for v in values)


def checkify(
    f: Callable[..., Out], errors: EnabledErrors = user_checks
) -> Callable[..., tuple[Error, Out]]:
    """`f` returning, first, the error value of its checks: `(error, f(*args))`.

    `check`s inside `f` become part of the error instead of raising; `errors` also enables
    checks `checkify` adds itself: `nan_checks` (a floating-point primitive made a NaN),
    `div_checks` (division by zero), `index_checks` (an out-of-bounds index), or their
    unions (`float_checks`, `automatic_checks`, `all_checks`). `error.get()` is the message
    of the first failed check (or None) and `error.throw()` raises it; the checked function
    can be jitted, differentiated and batched (a batched error reports each failing index).

    Args:
        f: the function to check.
        errors: the categories of errors to check, a frozenset (default: `user_checks`).

    Returns:
        The function returning `(error, output)`.
    """

    def checked_fun(*args: Any, **kwargs: Any) -> tuple[Error, Out]:
        out_trees: list[PyTreeDef] = []

        def closed_f() -> list[Any]:
            leaves, tree = tree_util.tree_flatten(f(*args, **kwargs))
            out_trees.append(tree)
            return leaves

        debug = DebugInfo(
            "checkify", func_src_info(f), lambda: argument_names(f, args, kwargs, set())
        )
        closed = trace_to_jaxpr(closed_f, (), debug)
        error, outs = checkify_jaxpr(closed, errors, init_error)
        return error, tree_util.tree_unflatten(out_trees[0], outs)

    return checked_fun
