"""Checkify rules of the primitives holding jaxprs: `jit`, `closed_call`, `remat2`, `cond`,
`while` and `scan`.

The held jaxprs are checkified (`jaxpr_to_checkify_jaxpr`) so they take the error's leaves
first and return them first, and the primitive is rebound with the error threaded through.
Where a jaxpr runs on several paths or repeatedly (cond branches, loop bodies), the error
passed in is first given every effect the jaxprs can raise (as "did not happen"), so that
all paths and iterations share one error structure.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from lamina_core import lax
from lamina_core.checkify._errors import Error, ErrorEffect, PyTreeDef
from lamina_core.checkify._interpreter import (
    EnabledErrors,
    avals_of,
    checkify_jaxpr,
    checkify_rules,
    jaxpr_to_checkify_jaxpr,
)
from lamina_core.checkpoint import remat_p
from lamina_core.interpreters import trace_to_jaxpr
from lamina_core.ir import AbstractValue, ClosedJaxpr, DebugInfo, Jaxpr, body_evaluated_primitives
from lamina_core.trace import eval_jaxpr
from lamina_core.transforms import UNSPECIFIED, closed_call_p, jit_p
from lamina_core.tree import tree_util

# Eagerly, JAX runs these calls' bodies in Python, where a failed check raises.
body_evaluated_primitives.update({closed_call_p, remat_p})


def move_binders_to_front(closed: ClosedJaxpr, to_front: Sequence[bool]) -> ClosedJaxpr:
    """`closed` with the flagged binders first, the others after, each group in order."""
    j = closed.jaxpr
    moved = [v for v, f in zip(j.invars, to_front, strict=True) if f]
    rest = [v for v, f in zip(j.invars, to_front, strict=True) if not f]
    return ClosedJaxpr(j.replace(invars=(*moved, *rest)), closed.consts)


_closed: weakref.WeakKeyDictionary[Jaxpr, ClosedJaxpr] = weakref.WeakKeyDictionary()


def _close(jaxpr: Jaxpr) -> ClosedJaxpr:
    # One closed jaxpr per open one, so checkifying a remat's body twice hits the cache.
    closed = _closed.get(jaxpr)
    if closed is None:
        closed = _closed[jaxpr] = ClosedJaxpr(jaxpr, [])
    return closed


def _with_error_avals(
    error: Error, values: Sequence[Any]
) -> tuple[list[Any], PyTreeDef, tuple[AbstractValue, ...]]:
    leaves, tree = tree_util.tree_flatten(error)
    return leaves, tree, avals_of([*leaves, *values])


@checkify_rules.register(jit_p)
def _jit_rule(
    error: Error, enabled_errors: EnabledErrors, *args: Any, jaxpr: ClosedJaxpr, **params: Any
) -> tuple[Error, Any]:
    leaves, tree, in_avals = _with_error_avals(error, args)
    checked, out_tree, _ = jaxpr_to_checkify_jaxpr(jaxpr, enabled_errors, tree, *in_avals)
    n_in, n_out = len(leaves), out_tree.num_leaves - len(params["out_shardings"])
    new_params = dict(
        params,
        jaxpr=checked,
        in_shardings=(UNSPECIFIED,) * n_in + tuple(params["in_shardings"]),
        out_shardings=(UNSPECIFIED,) * n_out + tuple(params["out_shardings"]),
        in_layouts=(None,) * n_in + tuple(params["in_layouts"]),
        out_layouts=(None,) * n_out + tuple(params["out_layouts"]),
        donated_invars=(False,) * n_in + tuple(params["donated_invars"]),
    )
    outs = jit_p.bind(*leaves, *args, **new_params)
    return tree_util.tree_unflatten(out_tree, outs)  # type: ignore[no-any-return]


@checkify_rules.register(closed_call_p)
def _closed_call_rule(
    error: Error, enabled_errors: EnabledErrors, *args: Any, call_jaxpr: ClosedJaxpr
) -> tuple[Error, Any]:
    leaves, tree, in_avals = _with_error_avals(error, args)
    checked, out_tree, _ = jaxpr_to_checkify_jaxpr(call_jaxpr, enabled_errors, tree, *in_avals)
    outs = closed_call_p.bind(*leaves, *args, call_jaxpr=checked)
    return tree_util.tree_unflatten(out_tree, outs)  # type: ignore[no-any-return]


@checkify_rules.register(remat_p)
def _remat_rule(
    error: Error, enabled_errors: EnabledErrors, *args: Any, jaxpr: Jaxpr, **params: Any
) -> tuple[Error, Any]:
    leaves, tree, in_avals = _with_error_avals(error, args)
    checked, out_tree, _ = jaxpr_to_checkify_jaxpr(_close(jaxpr), enabled_errors, tree, *in_avals)
    outs = remat_p.bind(*leaves, *args, jaxpr=checked.jaxpr, **params)
    return tree_util.tree_unflatten(out_tree, outs)  # type: ignore[no-any-return]


@checkify_rules.register(lax.cond_p)
def _cond_rule(
    error: Error,
    enabled_errors: EnabledErrors,
    index: Any,
    *ops: Any,
    branches: tuple[ClosedJaxpr, ...],
    **params: Any,
) -> tuple[Error, Any]:
    _, tree, in_avals = _with_error_avals(error, ops)
    effects: set[ErrorEffect] = set()
    for branch in branches:
        effects |= jaxpr_to_checkify_jaxpr(branch, enabled_errors, tree, *in_avals)[2]
    merged = error._add_placeholder_effects(effects)
    leaves, tree, in_avals = _with_error_avals(merged, ops)
    checked = [jaxpr_to_checkify_jaxpr(b, enabled_errors, tree, *in_avals) for b in branches]
    outs = lax.cond_p.bind(index, *leaves, *ops, branches=tuple(c[0] for c in checked), **params)
    err0, out = tree_util.tree_unflatten(checked[0][1], outs)
    metadata = dict(err0._metadata)
    for _, out_tree, _ in checked[1:]:
        metadata.update(tree_util.tree_unflatten(out_tree, outs)[0]._metadata)
    return err0._replace(_metadata=metadata), out


@checkify_rules.register(lax.scan_p)
def _scan_rule(
    error: Error,
    enabled_errors: EnabledErrors,
    *args: Any,
    reverse: bool,
    length: int,
    jaxpr: ClosedJaxpr,
    num_consts: int,
    num_carry: int,
    **params: Any,
) -> tuple[Error, Any]:
    consts, carry, xs = (
        args[:num_consts], args[num_consts : num_consts + num_carry], args[num_consts + num_carry :]
    )  # fmt: skip
    xs_avals = tuple(a.dec_rank(length, 0) for a in avals_of(xs))
    # The error's effects after the body, so that the carried error keeps one structure.
    _, tree, in_avals = _with_error_avals(error, [*consts, *carry])
    effects = jaxpr_to_checkify_jaxpr(jaxpr, enabled_errors, tree, *in_avals, *xs_avals)[2]
    merged = error._add_placeholder_effects(effects)
    leaves, tree, in_avals = _with_error_avals(merged, [*consts, *carry])
    checked, out_tree, _ = jaxpr_to_checkify_jaxpr(
        jaxpr, enabled_errors, tree, *in_avals, *xs_avals
    )
    to_front = [False] * len(leaves) + [True] * num_consts + [False] * (len(carry) + len(xs))
    outs = lax.scan_p.bind(
        *consts, *leaves, *carry, *xs,
        reverse=reverse, length=length, jaxpr=move_binders_to_front(checked, to_front),
        num_consts=num_consts, num_carry=num_carry + len(leaves), **params,
    )  # fmt: skip
    return tree_util.tree_unflatten(out_tree, outs)  # type: ignore[no-any-return]


def _checkify_while_body(
    cond_jaxpr: ClosedJaxpr,
    body_jaxpr: ClosedJaxpr,
    enabled_errors: EnabledErrors,
    error: Error,
    cond_nconsts: int,
) -> tuple[ClosedJaxpr, PyTreeDef, set[ErrorEffect]]:
    """The body followed by the next iteration's predicate (so that its checks are made,
    kept alive by a `dce_sink`), checkified; it takes the cond's consts first."""

    def body_then_cond(*c_consts_and_vals: Any) -> list[Any]:
        c_consts, vals = c_consts_and_vals[:cond_nconsts], c_consts_and_vals[cond_nconsts:]
        out = eval_jaxpr(body_jaxpr, (), *vals)
        lax.dce_sink(eval_jaxpr(cond_jaxpr, (), *c_consts, *out))
        return out

    c_consts_avals = tuple(cond_jaxpr.in_avals[:cond_nconsts])
    info = body_jaxpr.jaxpr.debug_info
    debug = None if info is None else DebugInfo(info.traced_for, info.func_src_info)
    traced = trace_to_jaxpr(body_then_cond, (*c_consts_avals, *body_jaxpr.in_avals), debug)
    leaves, tree = tree_util.tree_flatten(error)
    in_avals = (*avals_of(leaves), *c_consts_avals, *body_jaxpr.in_avals)
    return jaxpr_to_checkify_jaxpr(traced, enabled_errors, tree, *in_avals)


def _drop_error_outputs(closed: ClosedJaxpr, n: int) -> ClosedJaxpr:
    return ClosedJaxpr(closed.jaxpr.replace(outvars=closed.jaxpr.outvars[n:]), closed.consts)


@checkify_rules.register(lax.while_p)
def _while_rule(
    error: Error,
    enabled_errors: EnabledErrors,
    *args: Any,
    cond_nconsts: int,
    cond_jaxpr: ClosedJaxpr,
    body_nconsts: int,
    body_jaxpr: ClosedJaxpr,
) -> tuple[Error, Any]:
    if cond_jaxpr.out_avals[0].shape:  # type: ignore[attr-defined]  # the predicate is an array
        raise ValueError(
            "Checkify does not support batched while-loops (checkify-of-vmap-of-while). \n"
            "Hint: if possible, move the vmap to the outer level to get "
            "vmap-of-checkify-of-while."
        )
    c_consts = args[:cond_nconsts]
    b_consts = args[cond_nconsts : cond_nconsts + body_nconsts]
    carry = args[cond_nconsts + body_nconsts :]
    # The first evaluation of the predicate, before the loop, is checked here.
    error, _ = checkify_jaxpr(cond_jaxpr, enabled_errors, error, *c_consts, *carry)
    effects = _checkify_while_body(cond_jaxpr, body_jaxpr, enabled_errors, error, cond_nconsts)[2]
    error = error._add_placeholder_effects(effects)
    leaves, tree = tree_util.tree_flatten(error)
    checked_body, body_out_tree, _ = _checkify_while_body(
        cond_jaxpr, body_jaxpr, enabled_errors, error, cond_nconsts
    )
    n = len(leaves)
    body = move_binders_to_front(
        checked_body, [False] * n + [True] * (cond_nconsts + body_nconsts) + [False] * len(carry)
    )
    cond_avals = avals_of([*leaves, *c_consts, *carry])
    checked_cond = jaxpr_to_checkify_jaxpr(cond_jaxpr, enabled_errors, tree, *cond_avals)[0]
    cond = move_binders_to_front(
        _drop_error_outputs(checked_cond, n),
        [False] * n + [True] * cond_nconsts + [False] * len(carry),
    )
    outs = lax.while_p.bind(
        *c_consts, *c_consts, *b_consts, *leaves, *carry,
        cond_nconsts=cond_nconsts, cond_jaxpr=cond,
        body_nconsts=cond_nconsts + body_nconsts, body_jaxpr=body,
    )  # fmt: skip
    # The body's error tree holds the cond's metadata too: it runs the predicate.
    return tree_util.tree_unflatten(body_out_tree, outs)  # type: ignore[no-any-return]
