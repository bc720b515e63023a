"""Reverse mode of `scan`: linearization, transposition, partial evaluation and DCE, as JAX's.

Linearizing a `scan` linearizes its body once, after a fixpoint on which carries have a
nonzero tangent. The body's residuals become extra `ys` of the primal scan (*extensive*
residuals, one per step), except those computed from the consts alone, which are hoisted out
of the loop and computed once (*intensive*), and those that are consts or `xs` themselves,
which are passed through. The tangent scan takes `[*intensive res, *nonzero tangents,
*extensive res]`; its transpose is a `reverse` scan whose consts are the intensive
residuals, whose carry is the const and carry cotangents, and whose `xs` are the `ys`
cotangents and the extensive residuals.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core.interpreters import (
    PartialEvalCustomResult,
    Policy,
    SplitTrace,
    TangentTrace,
    UndefinedPrimal,
    Zero,
    backward_pass,
    dce_jaxpr_keeping,
    dce_rules,
    instantiate_zeros,
    is_float0,
    is_undefined,
    known_partial_eval_rules,
    linearization_rules,
    partial_eval_jaxpr_custom,
    partial_eval_jaxpr_custom_rules,
    partial_eval_jaxpr_nounits,
    partial_eval_rules,
    prune_residuals,
    residuals_in_jax_order,
    trace_to_jaxpr,
    transpose_rules,
    zeros_like_aval,
)
from lamina_core.ir import (
    AbstractValue,
    ClosedJaxpr,
    DropVar,
    Jaxpr,
    JaxprEqn,
    Var,
    reset_name_stack,
)
from lamina_core.lax.control_flow.common import memo, move_binders_to_front
from lamina_core.lax.control_flow.scan import scan_p
from lamina_core.trace import current_trace, eval_jaxpr, set_current_trace, typeof
from lamina_core.transforms import closed_call_p, linearize_jaxpr_forwarding, split_jvp_outs

_Cache = weakref.WeakKeyDictionary[Any, dict[Any, Any]]


def _or(a: Sequence[bool], b: Sequence[bool]) -> list[bool]:
    return [x or y for x, y in zip(a, b, strict=True)]


def _merge(which: Sequence[bool], when_false: Sequence[Any], when_true: Sequence[Any]) -> list[Any]:
    f, t = iter(when_false), iter(when_true)
    return [next(t) if w else next(f) for w in which]


def hoist_invariants(
    closed: ClosedJaxpr, consts: Sequence[Any], num_res: int
) -> tuple[ClosedJaxpr, list[Any], list[bool], list[Any]]:
    """Compute now what a body's residuals need of its consts alone (JAX's
    `_scan_known_hoisting`).

    `closed` takes `[*consts, *others]` and returns `[*outs, *residuals]`. Returns the body
    left to run per step (`[*new consts, *others] -> [*outs, *residuals not hoisted]`), its
    new consts (the values computed now that it reads), which residuals were hoisted, and
    their values.
    """
    parent = current_trace()
    staged = TangentTrace(parent, closed.jaxpr.debug_info)
    # A mutable const (a Ref) stays in the loop: what is read from it may change every step.
    refs = [c for c in consts if typeof(c).mutable]
    ref_args = [staged.new_arg(typeof(c)) for c in refs]
    it_ref = iter(ref_args)
    const_args = [next(it_ref) if typeof(c).mutable else c for c in consts]
    others = [staged.new_arg(a) for a in closed.in_avals[len(consts) :]]
    split = SplitTrace(parent, staged)
    with set_current_trace(split), reset_name_stack():
        outs = eval_jaxpr(closed, (), *const_args, *others)
    n_out = len(outs) - num_res
    res = outs[n_out:]
    hoisted = [not split.is_unknown(r) for r in res]
    jaxpr, new_consts = staged.finish(
        [a.jaxpr_var for a in (*ref_args, *others)],
        [*outs[:n_out], *(r for r, h in zip(res, hoisted, strict=True) if not h)],
    )
    # Its new consts in the order JAX's partial evaluator gives them (not by first use).
    pruned = residuals_in_jax_order(prune_residuals(jaxpr, new_consts))
    body = pruned.jaxpr.replace(
        constvars=(),
        invars=(*pruned.jaxpr.constvars, *pruned.jaxpr.invars),
        eqns=_drop_unread_outputs(pruned.jaxpr),
    )
    hoisted_vals = [r for r, h in zip(res, hoisted, strict=True) if h]
    return ClosedJaxpr(body, []), [*pruned.consts, *refs], hoisted, hoisted_vals


def _drop_unread_outputs(jaxpr: Jaxpr) -> list[JaxprEqn]:
    """`jaxpr`'s equations with the outputs nothing reads made `DropVar`s (printed `_`): JAX
    builds the hoisted body from its partial evaluator's tracers, and by then those are dead."""
    read = {v for v in jaxpr.outvars if isinstance(v, Var)}
    for eqn in jaxpr.eqns:
        read.update(v for v in eqn.invars if isinstance(v, Var))
    return [
        eqn
        if all(v in read for v in eqn.outvars)
        else eqn.replace(outvars=tuple(v if v in read else DropVar(v.aval) for v in eqn.outvars))
        for eqn in jaxpr.eqns
    ]


def _residual_values(
    in_fwd_res: Sequence[int | None],
    which_hoisted: Sequence[bool],
    ext_res: Sequence[Any],
    hoisted: Sequence[Any],
    sources: Sequence[Any],
) -> list[Any]:
    """Each residual's value: the input it forwards (`sources[f]`), else the next hoisted or
    extensive value, in the body's residual order."""
    non_fwd = iter(_merge(which_hoisted, ext_res, hoisted))
    return [next(non_fwd) if f is None else sources[f] for f in in_fwd_res]


def _extensive_residuals(
    in_fwd_res: Sequence[int | None], which_hoisted: Sequence[bool], first_xs: int
) -> list[bool]:
    """Which residuals vary per step (the scan's xs): those not hoisted, and forwarded xs
    (inputs from `first_xs` on)."""
    hoisted_it = iter(which_hoisted)
    return [not next(hoisted_it) if f is None else f >= first_xs for f in in_fwd_res]


# --- linearization -----------------------------------------------------------------------


def _scan_linearize(
    nonzeros: Sequence[bool],
    *primals: Any,
    reverse: bool,
    length: int,
    jaxpr: ClosedJaxpr,
    num_consts: int,
    num_carry: int,
    unroll: int,
) -> Any:
    nz = [
        n and not is_float0(a.to_tangent_aval())
        for n, a in zip(nonzeros, jaxpr.in_avals, strict=True)
    ]
    head = num_consts + num_carry
    const_nz, carry_nz, xs_nz = nz[:num_consts], nz[num_consts:head], nz[head:]
    num_ys = len(jaxpr.out_avals) - num_carry
    n_closed = len(jaxpr.consts)
    # Residuals may be consts or xs passed through, never carries (they change every step).
    allow = (True,) * n_closed + tuple(
        (i < num_consts or i >= head) and not isinstance(x, np.ndarray)
        for i, x in enumerate(primals)
    )
    for _ in range(1 + num_carry):
        nzs = (*const_nz, *carry_nz, *xs_nz)
        lin = linearize_jaxpr_forwarding(jaxpr, nzs, (*carry_nz, *[False] * num_ys), allow)
        carry_out = lin.out_nonzeros[:num_carry]
        if carry_out == carry_nz:
            break
        carry_nz = _or(carry_nz, carry_out)
    else:
        raise AssertionError("scan linearization: no fixpoint of the nonzero carries")
    num_primals_out = len(lin.primal.out_avals) - lin.num_res
    body, new_consts, which_hoisted, hoisted = hoist_invariants(
        lin.primal, primals[:num_consts], lin.num_res
    )
    # Extensive residuals (per step) go after the tangents, as the scan's xs.
    to_back = _extensive_residuals(lin.in_fwd_res, which_hoisted, n_closed + head)
    n_tangents_in = len(lin.tangent.in_avals) - len(lin.in_fwd_res)
    tangent_body = move_binders_to_front(
        lin.tangent, [not b for b in to_back] + [True] * n_tangents_in
    )
    if body.out_avals or body.effects:
        outs = scan_p.bind(
            *new_consts, *primals[num_consts:], reverse=reverse, length=length, jaxpr=body,
            num_consts=len(new_consts), num_carry=num_carry, unroll=unroll,
        )  # fmt: skip
    else:
        outs = []
    primals_out, ext_res = outs[:num_primals_out], outs[num_primals_out:]
    residuals = _residual_values(
        lin.in_fwd_res, which_hoisted, ext_res, hoisted, [*jaxpr.consts, *primals]
    )
    out_nz = lin.out_nonzeros
    final_nz = [*const_nz, *carry_nz, *xs_nz]

    def linearized(res: Sequence[Any], *tangents: Any) -> list[Any]:
        int_res = [r for r, b in zip(res, to_back, strict=True) if not b]
        ext = [r for r, b in zip(res, to_back, strict=True) if b]
        # Staged zeros of the tangent program (literals when scalar), not residuals.
        nz_tangents = [
            zeros_like_aval(t.aval) if type(t) is Zero else t
            for t, n in zip(tangents, final_nz, strict=True)
            if n
        ]
        nz_out = scan_p.bind(
            *int_res,
            *nz_tangents,
            *ext,
            reverse=reverse,
            length=length,
            jaxpr=tangent_body,
            num_consts=len(int_res) + sum(const_nz),
            num_carry=sum(carry_nz),
            unroll=unroll,
        )
        return split_jvp_outs([*primals_out, *nz_out], out_nz)[1]

    return primals_out, list(out_nz), residuals, linearized


linearization_rules.set(scan_p, _scan_linearize)

# --- transposition -----------------------------------------------------------------------

_transpose_cache: _Cache = weakref.WeakKeyDictionary()


def _transpose_body(
    body: ClosedJaxpr,
    counts: tuple[int, int, int, int, int],
    ys_nonzero: tuple[bool, ...],
    trans_avals: tuple[AbstractValue, ...],
) -> ClosedJaxpr:
    """The transposed step: `[ires, ct consts, ct carry, ct ys, eres] -> [ct consts, ct carry,
    ct xs]`, cotangents accumulated onto the running const sums (JAX's)."""
    n_ires, n_cdot, n_carry, n_xdot, _ = counts

    def make() -> ClosedJaxpr:
        avals = body.in_avals

        def fun(*args: Any) -> list[Any]:
            it = iter(args)
            ires = [next(it) for _ in range(n_ires)]
            ct_consts = [next(it) for _ in range(n_cdot)]
            ct_carry = [next(it) for _ in range(n_carry)]
            y_avals = body.out_avals[n_carry:]
            ct_ys = [
                next(it) if nz else Zero(a.to_tangent_aval())
                for a, nz in zip(y_avals, ys_nonzero, strict=True)
            ]
            eres = list(it)
            # As JAX's, const and carry cotangents take the types of the values they start
            # from (a weak carry's cotangent may be strong), xs cotangents the body's.
            linear = [
                *(UndefinedPrimal(typeof(c)) for c in (*ct_consts, *ct_carry)),
                *(UndefinedPrimal(a) for a in avals[n_ires + n_cdot + n_carry :][:n_xdot]),
            ]
            in_cts = backward_pass(
                body.jaxpr,
                body.consts,
                [*ires, *linear, *eres],
                [*ct_carry, *ct_ys],
                [*ct_consts, *(Zero(u.aval) for u in linear[n_cdot:])],
            )
            return [instantiate_zeros(c) for c in in_cts]

        return trace_to_jaxpr(fun, trans_avals, body.jaxpr.debug_info)

    key = (counts, ys_nonzero, trans_avals)
    result: ClosedJaxpr = memo(_transpose_cache, body, key, make)
    return result


def _scan_transpose(
    cts: Sequence[Any],
    *args: Any,
    reverse: bool,
    length: int,
    jaxpr: ClosedJaxpr,
    num_consts: int,
    num_carry: int,
    unroll: int,
) -> list[Any]:
    head = num_consts + num_carry
    linear = [is_undefined(a) for a in args]
    consts_lin, xs_lin = linear[:num_consts], linear[head:]
    # Binders as `[ires, const tangents, carries, xs tangents, eres]` (what linearization
    # makes; anything else is brought to it). Every carry is transposed, defined or not.
    order = (
        [i for i in range(num_consts) if not consts_lin[i]]
        + [i for i in range(num_consts) if consts_lin[i]]
        + list(range(num_consts, head))
        + [head + i for i, lin in enumerate(xs_lin) if lin]
        + [head + i for i, lin in enumerate(xs_lin) if not lin]
    )
    body = jaxpr
    if order != list(range(len(args))):
        j = jaxpr.jaxpr
        body = ClosedJaxpr(j.replace(invars=tuple(j.invars[i] for i in order)), jaxpr.consts)
    n_cdot, n_xdot = sum(consts_lin), sum(xs_lin)
    n_ires = num_consts - n_cdot
    n_eres = len(xs_lin) - n_xdot
    ordered = [args[i] for i in order]
    ires = ordered[:n_ires]
    eres = ordered[len(ordered) - n_eres :]
    ct_consts = [zeros_like_aval(body.in_avals[n_ires + k]) for k in range(n_cdot)]
    ct_carry = [instantiate_zeros(c) for c in cts[:num_carry]]
    ct_ys = [c for c in cts[num_carry:] if type(c) is not Zero]
    ys_nonzero = tuple(type(c) is not Zero for c in cts[num_carry:])
    intensive = [*ires, *ct_consts, *ct_carry]
    extensive = [*ct_ys, *eres]
    trans_avals = (
        *(typeof(x) for x in intensive),
        *(typeof(x).dec_rank(length, typeof(x).leading_axis_spec()) for x in extensive),
    )
    counts = (n_ires, n_cdot, num_carry, n_xdot, n_eres)
    transposed = _transpose_body(body, counts, ys_nonzero, trans_avals)
    outs = scan_p.bind(
        *intensive, *extensive, reverse=not reverse, length=length, jaxpr=transposed,
        num_consts=n_ires, num_carry=n_cdot + num_carry, unroll=unroll,
    )  # fmt: skip
    linear_positions = order[n_ires : n_ires + n_cdot + num_carry + n_xdot]
    cts_by_position = dict(zip(linear_positions, outs, strict=True))
    return [cts_by_position[i] if is_undefined(a) else None for i, a in enumerate(args)]


transpose_rules.set(scan_p, _scan_transpose)

# --- partial evaluation (a scan met by a jvp rule, or in a loop body being split) ----------


def _scan_partial_eval(
    trace: SplitTrace,
    *args: Any,
    reverse: bool,
    length: int,
    jaxpr: ClosedJaxpr,
    num_consts: int,
    num_carry: int,
    unroll: int,
) -> list[Any]:
    head = num_consts + num_carry
    num_ys = len(jaxpr.out_avals) - num_carry
    unknowns = [trace.is_unknown(a) for a in args]
    const_uk, carry_uk, xs_uk = unknowns[:num_consts], unknowns[num_consts:head], unknowns[head:]
    for _ in range(1 + num_carry):
        uks = [*const_uk, *carry_uk, *xs_uk]
        known, unknown, out_uk, _ = partial_eval_jaxpr_nounits(
            jaxpr, uks, [*carry_uk, *[False] * num_ys]
        )
        if out_uk[:num_carry] == carry_uk:
            break
        carry_uk = _or(carry_uk, out_uk[:num_carry])
    else:
        raise AssertionError("scan partial evaluation: no fixpoint of the unknown carries")
    known_args = [a for a, uk in zip(args, uks, strict=True) if not uk]
    n_known_consts = num_consts - sum(const_uk)
    n_known_head = n_known_consts + num_carry - sum(carry_uk)
    n_known_out = len(out_uk) - sum(out_uk)
    # Residuals that are known consts or xs are passed through, not computed (as JAX's
    # `partial_eval_jaxpr_nounits_fwd`); carries change every step, NumPy arrays stay out.
    known_jaxpr = known.jaxpr
    positions = {v: i for i, v in enumerate(known_jaxpr.invars)}
    in_fwd_res: list[int | None] = []
    kept = []
    for atom in known_jaxpr.outvars[n_known_out:]:
        k = positions.get(atom) if isinstance(atom, Var) else None
        if k is not None and k >= n_known_consts and k < n_known_head:
            k = None
        if k is not None and isinstance(known_args[k], np.ndarray):
            k = None
        in_fwd_res.append(k)
        if k is None:
            kept.append(atom)
    known = ClosedJaxpr(
        known_jaxpr.replace(outvars=(*known_jaxpr.outvars[:n_known_out], *kept)), known.consts
    )
    body, new_consts, which_hoisted, hoisted = hoist_invariants(
        known, known_args[:n_known_consts], len(kept)
    )
    if body.out_avals or body.effects:
        outs = trace.bind_known(
            scan_p,
            [*new_consts, *known_args[n_known_consts:]],
            dict(
                reverse=reverse, length=length, jaxpr=body, num_consts=len(new_consts),
                num_carry=num_carry - sum(carry_uk), unroll=unroll,
            ),
        )  # fmt: skip
    else:
        outs = []
    known_outs, ext_res = outs[:n_known_out], outs[n_known_out:]
    residuals = _residual_values(in_fwd_res, which_hoisted, ext_res, hoisted, known_args)
    # Extensive residuals (per step) are the scan's xs, after the unknown inputs.
    extensive = _extensive_residuals(in_fwd_res, which_hoisted, n_known_head)
    int_res = [r for r, e in zip(residuals, extensive, strict=True) if not e]
    ext = [r for r, e in zip(residuals, extensive, strict=True) if e]
    n_unknown_in = len(unknown.in_avals) - len(in_fwd_res)
    # JAX builds the unknown body from its partial evaluator's tracers too: unread outputs of
    # the equations it keeps (writes to Refs) are dropped, as in `hoist_invariants`.
    eqns = _drop_unread_outputs(unknown.jaxpr)
    if any(a is not b for a, b in zip(eqns, unknown.jaxpr.eqns, strict=True)):
        unknown = ClosedJaxpr(unknown.jaxpr.replace(eqns=eqns), unknown.consts)
    unknown_body = move_binders_to_front(
        unknown, [*(not e for e in extensive), *[True] * n_unknown_in]
    )
    unknown_args = [a for a, uk in zip(args, uks, strict=True) if uk]
    if not any(out_uk) and not unknown_body.effects:
        # Every operand known (JAX calls this rule anyway): the known loop, invariants hoisted.
        return list(known_outs)
    unknown_outs = iter(
        trace.bind_unknown(
            scan_p,
            [*int_res, *unknown_args, *ext],
            dict(
                reverse=reverse,
                length=length,
                jaxpr=unknown_body,
                num_consts=len(int_res) + sum(const_uk),
                num_carry=sum(carry_uk),
                unroll=unroll,
            ),
        )
    )
    known_it = iter(known_outs)
    return [next(unknown_outs) if uk else next(known_it) for uk in out_uk]


partial_eval_rules.set(scan_p, _scan_partial_eval)
known_partial_eval_rules.set(scan_p, _scan_partial_eval)

# --- policy partial evaluation (a scan inside a checkpointed function) ---------------------


def _scan_partial_eval_custom(
    saveable: Policy, unks_in: Sequence[bool], inst_in: Sequence[bool], eqn: JaxprEqn
) -> PartialEvalCustomResult:
    jaxpr: ClosedJaxpr = eqn.params["jaxpr"]
    num_consts, num_carry = eqn.params["num_consts"], eqn.params["num_carry"]
    length = eqn.params["length"]
    num_ys = len(jaxpr.out_avals) - num_carry
    head = num_consts + num_carry
    const_uk, carry_uk, xs_uk = (
        list(unks_in[:num_consts]),
        list(unks_in[num_consts:head]),
        list(unks_in[head:]),
    )
    for _ in range(1 + num_carry):
        uks = [*const_uk, *carry_uk, *xs_uk]
        known_, staged_, unks_out, inst_out, num_res = partial_eval_jaxpr_custom(
            jaxpr.jaxpr, uks, True, [*carry_uk, *[False] * num_ys], True, saveable
        )
        if unks_out[:num_carry] == carry_uk:
            break
        carry_uk = _or(carry_uk, unks_out[:num_carry])
    else:
        raise AssertionError("scan policy partial evaluation: no fixpoint of the unknown carries")
    known = ClosedJaxpr(known_, jaxpr.consts)
    staged = ClosedJaxpr(staged_, jaxpr.consts)
    res_avals = staged.in_avals[:num_res]
    # The staged body takes every input (the residuals after them), so all become available.
    n_ins = len(jaxpr.in_avals)
    staged = move_binders_to_front(staged, [False] * num_res + [True] * n_ins)
    new_inst = [
        x for x, inst in zip(eqn.invars, inst_in, strict=True) if isinstance(x, Var) and not inst
    ]
    # Residuals computed from the known consts alone are hoisted out of the loop (intensive).
    n_const_known = num_consts - sum(const_uk)
    n_loop_ins = len(known.in_avals) - n_const_known
    n_known_out = len(unks_out) - sum(unks_out)
    hoist, loop, loop_dep, _ = partial_eval_jaxpr_nounits(
        known,
        [False] * n_const_known + [True] * n_loop_ins,
        [True] * n_known_out + [False] * num_res,
    )
    loop_dep_res = loop_dep[len(loop_dep) - num_res :]
    staged = move_binders_to_front(staged, [False] * n_ins + [not d for d in loop_dep_res])
    intensive_avals = [a for a, d in zip(res_avals, loop_dep_res, strict=True) if not d]
    extensive_avals = [
        a.inc_rank(length, 0) for a, d in zip(res_avals, loop_dep_res, strict=True) if d
    ]
    intensive_res = [Var(a) for a in intensive_avals]
    extensive_res = [Var(a) for a in extensive_avals]
    n_intensive = len(intensive_res)
    params_loop = {**eqn.params, "jaxpr": loop, "num_carry": num_carry - sum(carry_uk)}

    def known_call(*ins: Any) -> list[Any]:
        out_hoist = eval_jaxpr(hoist, (), *ins[:n_const_known])
        consts_lp = out_hoist[n_intensive:]
        out_loop = scan_p.bind(
            *consts_lp, *ins[n_const_known:], **{**params_loop, "num_consts": len(consts_lp)}
        )
        return [*out_hoist[:n_intensive], *out_loop]

    ins_known = [x for x, uk in zip(eqn.invars, uks, strict=True) if not uk]
    call_jaxpr = trace_to_jaxpr(known_call, [x.aval for x in ins_known], hoist.jaxpr.debug_info)
    outs_known = [v for v, uk in zip(eqn.outvars, unks_out, strict=True) if not uk]
    eqn_known = eqn.replace(
        primitive=closed_call_p,
        invars=tuple(ins_known),
        outvars=(*intensive_res, *outs_known, *extensive_res),
        params={"call_jaxpr": call_jaxpr},
        effects=call_jaxpr.effects,
    )
    eqn_staged = eqn.replace(
        invars=(*intensive_res, *eqn.invars, *extensive_res),
        outvars=tuple(v for v, i in zip(eqn.outvars, inst_out, strict=True) if i),
        params={**eqn.params, "jaxpr": staged, "num_consts": n_intensive + num_consts},
        effects=staged.effects,
    )
    return eqn_known, eqn_staged, unks_out, inst_out, [*new_inst, *intensive_res, *extensive_res]


partial_eval_jaxpr_custom_rules.set(scan_p, _scan_partial_eval_custom)

# --- dead-code elimination ---------------------------------------------------------------

_dce_cache: _Cache = weakref.WeakKeyDictionary()


def _scan_dce(used_outputs: list[bool], eqn: JaxprEqn) -> tuple[list[bool], JaxprEqn | None]:
    if not any(used_outputs) and not eqn.effects:
        return [False] * len(eqn.invars), None
    closed: ClosedJaxpr = eqn.params["jaxpr"]
    num_consts, num_carry = eqn.params["num_consts"], eqn.params["num_carry"]
    num_xs = len(closed.in_avals) - num_consts - num_carry
    used_carry, used_ys = used_outputs[:num_carry], used_outputs[num_carry:]

    def make() -> tuple[ClosedJaxpr, list[bool], list[bool]]:
        carry = list(used_carry)
        for _ in range(1 + num_carry):
            keep = [False] * num_consts + carry + [False] * num_xs
            jaxpr, used_in = dce_jaxpr_keeping(closed.jaxpr, [*carry, *used_ys], keep)
            carry_in = used_in[num_consts : num_consts + num_carry]
            if carry_in == carry:
                break
            carry = _or(carry, carry_in)
        else:
            raise AssertionError("scan dead-code elimination: no fixpoint of the used carries")
        trimmed = closed if jaxpr is closed.jaxpr else ClosedJaxpr(jaxpr, closed.consts)
        return trimmed, used_in, [*carry, *used_ys]

    trimmed, used_in, used_out = memo(_dce_cache, closed, tuple(used_outputs), make)
    if trimmed is closed and all(used_out):
        return used_in, eqn
    params = {
        **eqn.params,
        "jaxpr": trimmed,
        "num_consts": sum(used_in[:num_consts]),
        "num_carry": sum(used_in[num_consts : num_consts + num_carry]),
    }
    new = eqn.replace(
        invars=tuple(v for v, u in zip(eqn.invars, used_in, strict=True) if u),
        outvars=tuple(v for v, u in zip(eqn.outvars, used_out, strict=True) if u),
        params=params,
        effects=trimmed.effects,
    )
    return used_in, new


dce_rules.set(scan_p, _scan_dce)

__all__ = ["hoist_invariants"]
