"""Checkify rules of `custom_jvp_call`, `custom_vjp_call` and `shard_map`.

A custom-derivative call is rebound with its function checkified: the error's leaves become
operands (after the closed-over values) and leading results. As in JAX, the user's rules add
no checks: under differentiation the rule (`jvp`, or `fwd` and `bwd`) runs instead of the
function and the error passes through it unchanged (given, as "did not happen", the effects
the function's checks would have added, so that the call's results keep one structure).

A `shard_map` body is checkified with the error replicated into it; each device's error
comes out stacked along a new leading axis split over the whole mesh, so the error after the
call is a batched one (JAX's layout).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.checkify._errors import Error, ErrorEffect, PyTreeDef
from lamina_core.checkify._interpreter import (
    EnabledErrors,
    avals_of,
    checkify_rules,
    jaxpr_to_checkify_jaxpr,
)
from lamina_core.checkify._rules_control_flow import move_binders_to_front
from lamina_core.custom_derivatives import custom_jvp_call_p, custom_vjp_call_p
from lamina_core.interpreters import Zero, trace_to_jaxpr
from lamina_core.ir import AbstractValue, ClosedJaxpr, Jaxpr, P, body_evaluated_primitives
from lamina_core.sharding import manual_axes_env, shard_map_p
from lamina_core.trace import eval_jaxpr
from lamina_core.tree import tree_util

# Eagerly, JAX runs these calls' bodies in Python, where a failed check raises.
body_evaluated_primitives.update({custom_jvp_call_p, custom_vjp_call_p})


class _Renamed:
    """A user rule wrapped for the error's extra operands, printing as the rule it wraps."""

    __slots__ = ("fun", "shown")

    def __init__(self, fun: Callable[..., Any], shown: Any) -> None:
        self.fun, self.shown = fun, shown

    def __repr__(self) -> str:
        return repr(self.shown)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fun(*args, **kwargs)


def _checked_call(
    error: Error, enabled_errors: EnabledErrors, call_jaxpr: ClosedJaxpr, num_consts: int,
    ops: Sequence[Any],
) -> tuple[Error, list[Any], ClosedJaxpr, PyTreeDef, set[ErrorEffect]]:  # fmt: skip
    """The call's function checkified, taking the closed-over values, the error's leaves and
    the arguments, in that order; also the error's tree, its leaves, and the effects."""
    leaves, tree = tree_util.tree_flatten(error)
    in_avals = avals_of([*leaves, *ops])
    checked, out_tree, effects = jaxpr_to_checkify_jaxpr(
        call_jaxpr, enabled_errors, tree, *in_avals
    )
    n = len(leaves)
    to_front = [False] * n + [True] * num_consts + [False] * (len(ops) - num_consts)
    return error, leaves, move_binders_to_front(checked, to_front), out_tree, effects


def _with_error_tree(n_errors: int, tree: PyTreeDef) -> PyTreeDef:
    """The tree of `(error_leaves, *args)` for a call whose arguments have tree `tree`."""
    args = tree_util.tree_unflatten(tree, [0] * tree.num_leaves)
    return tree_util.tree_structure(([0] * n_errors, *args))


def _pass_error_through(
    in_tree: PyTreeDef, effects: set[ErrorEffect], out_avals: Sequence[AbstractValue]
) -> Callable[[Sequence[Any]], list[Any]]:
    """The error's leaves after a rule: the error before it, with the function's effects."""

    def through(leaves: Sequence[Any]) -> list[Any]:
        error: Error = tree_util.tree_unflatten(in_tree, list(leaves))
        out = tree_util.tree_leaves(error._add_placeholder_effects(effects))
        return [jnp.asarray(x, a.dtype) for x, a in zip(out, out_avals, strict=True)]  # type: ignore[attr-defined]  # error leaves are arrays

    return through


def _float0_zeros(values: Sequence[Any]) -> list[Zero]:
    return [Zero(a.to_tangent_aval()) for a in avals_of(values)]


@checkify_rules.register(custom_jvp_call_p)
def _custom_jvp_rule(
    error: Error, enabled_errors: EnabledErrors, *ops: Any, call_jaxpr: ClosedJaxpr,
    jvp: Any, num_consts: int, in_tree: PyTreeDef, out_tree: PyTreeDef, **params: Any,
) -> tuple[Error, Any]:  # fmt: skip
    _, leaves, checked, err_out_tree, effects = _checked_call(
        error, enabled_errors, call_jaxpr, num_consts, ops
    )
    n = len(leaves)
    n_out = err_out_tree.num_leaves - out_tree.num_leaves
    err_in_tree = tree_util.tree_structure(error)
    through = _pass_error_through(err_in_tree, effects, checked.out_avals[:n_out])

    def rule(primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
        errors, *args = primals
        p_out, t_out = jvp(tuple(args), tuple(tangents[1:]))
        out_errors = through(errors)
        return (out_errors, p_out), (_float0_zeros(out_errors), t_out)

    outs = custom_jvp_call_p.bind(
        *ops[:num_consts], *leaves, *ops[num_consts:],
        call_jaxpr=checked, jvp=_Renamed(rule, jvp), num_consts=num_consts,
        in_tree=_with_error_tree(n, in_tree),
        out_tree=_with_error_out_tree(n_out, out_tree),
        **params,
    )  # fmt: skip
    return tree_util.tree_unflatten(err_out_tree, outs)  # type: ignore[no-any-return]


def _value(x: Any) -> Any:
    """A `CustomVJPPrimal`'s value (fwd with `symbolic_zeros`), else `x`."""
    return getattr(x, "value", x)


@checkify_rules.register(custom_vjp_call_p)
def _custom_vjp_rule(
    error: Error, enabled_errors: EnabledErrors, *ops: Any, call_jaxpr: ClosedJaxpr,
    num_consts: int, in_tree: PyTreeDef, out_tree: PyTreeDef, fwd: Any, bwd: Any,
    fwd_fun: Callable[..., Any], bwd_fun: Callable[..., Any], **params: Any,
) -> tuple[Error, Any]:  # fmt: skip
    _, leaves, checked, err_out_tree, effects = _checked_call(
        error, enabled_errors, call_jaxpr, num_consts, ops
    )
    n = len(leaves)
    n_out = err_out_tree.num_leaves - out_tree.num_leaves
    err_in_tree = tree_util.tree_structure(error)
    through = _pass_error_through(err_in_tree, effects, checked.out_avals[:n_out])

    def checked_fwd(errors: Sequence[Any], *args: Any) -> Any:
        out, res = fwd_fun(*args)
        return (through([_value(e) for e in errors]), out), res

    def checked_bwd(res: Any, ct: Any) -> Any:
        cts = bwd_fun(res, ct[1])
        return (None, *cts) if isinstance(cts, (tuple, list)) else (None, cts)

    outs = custom_vjp_call_p.bind(
        *ops[:num_consts], *leaves, *ops[num_consts:],
        call_jaxpr=checked, num_consts=num_consts,
        in_tree=_with_error_tree(n, in_tree),
        out_tree=_with_error_out_tree(n_out, out_tree),
        fwd=fwd, bwd=bwd, fwd_fun=checked_fwd, bwd_fun=checked_bwd, **params,
    )  # fmt: skip
    return tree_util.tree_unflatten(err_out_tree, outs)  # type: ignore[no-any-return]


@checkify_rules.register(shard_map_p)
def _shard_map_rule(
    error: Error, enabled_errors: EnabledErrors, *ops: Any, jaxpr: Jaxpr, mesh: Any,
    in_specs: tuple[Any, ...], out_specs: tuple[Any, ...], check_vma: bool,
    newly_manual_axes: frozenset[Any],
) -> tuple[Error, Any]:  # fmt: skip
    leaves, tree = tree_util.tree_flatten(error)
    new_in_specs = (*(P() for _ in leaves), *in_specs)
    manual = newly_manual_axes | frozenset(mesh.manual_axes)
    in_avals = [
        a.shard(mesh, manual, check_vma, s)
        for a, s in zip(avals_of([*leaves, *ops]), new_in_specs, strict=True)
    ]
    with manual_axes_env(mesh, manual, check_vma):
        closed = ClosedJaxpr(jaxpr, [])
        checked, out_tree, _ = jaxpr_to_checkify_jaxpr(closed, enabled_errors, tree, *in_avals)
        n_out = out_tree.num_leaves - len(out_specs)

        def stack_errors(*args: Any) -> list[Any]:
            outs = eval_jaxpr(checked, (), *args)
            return [*(lax.expand_dims(e, [0]) for e in outs[:n_out]), *outs[n_out:]]

        body = trace_to_jaxpr(stack_errors, checked.in_avals, checked.jaxpr.debug_info)
    outs = shard_map_p.bind(
        *leaves, *ops,
        jaxpr=body.jaxpr, mesh=mesh, in_specs=new_in_specs,
        out_specs=(*(P(mesh.axis_names) for _ in range(n_out)), *out_specs),
        check_vma=check_vma, newly_manual_axes=newly_manual_axes,
    )  # fmt: skip
    return tree_util.tree_unflatten(out_tree, outs)  # type: ignore[no-any-return]


def _with_error_out_tree(n_out: int, out_tree: PyTreeDef) -> PyTreeDef:
    """The output tree of a checked custom rule: the error's `n_out` leaves, then `out_tree`."""
    outs = tree_util.tree_unflatten(out_tree, [0] * out_tree.num_leaves)
    return tree_util.tree_structure(([0] * n_out, outs))
