"""Reverse mode of `cond`: linearization, transposition, partial evaluation and DCE, as JAX's.

Linearizing a `cond` linearizes every branch with the same nonzero pattern. The branches
save different residuals, but a `cond`'s branches must have one type, so the residuals are
merged by type (JAX's `_merge_branch_residuals`): each branch returns every merged slot, the
ones it does not fill holding `empty2`, and each tangent branch takes every slot. The primal
`cond` returns `[*outs, *residuals]`; the tangent one takes `[index, *residuals, *tangents]`,
and transposes to a `cond` of transposed branches taking `[index, *residuals, *cotangents]`.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Sequence
from typing import Any

from lamina_core.interpreters import (
    PartialEvalCustomResult,
    Policy,
    SplitTrace,
    Zero,
    cotangents_per_arg,
    dce_jaxpr_keeping,
    dce_rules,
    empty_like_aval,
    is_float0,
    is_undefined,
    linearization_rules,
    partial_eval_jaxpr_custom,
    partial_eval_jaxpr_custom_rules,
    partial_eval_jaxpr_nounits,
    partial_eval_rules,
    trace_to_jaxpr,
    transpose_rules,
)
from lamina_core.ir import AbstractValue, ClosedJaxpr, JaxprEqn, Var
from lamina_core.lax.control_flow.common import memo
from lamina_core.lax.control_flow.conditionals import cond_p
from lamina_core.trace import eval_jaxpr, typeof
from lamina_core.transforms import linearize_jaxpr_forwarding, split_jvp_outs, transpose_jaxpr

_Cache = weakref.WeakKeyDictionary[Any, dict[Any, Any]]

Branches = tuple[ClosedJaxpr, ...]


def merge_branch_residuals(
    per_branch: Sequence[Sequence[AbstractValue]],
) -> tuple[list[AbstractValue], list[list[int]]]:
    """One residual list all branches fit, and where each branch's residuals go in it.

    A type appearing k times in a branch takes k slots, shared with other branches' residuals
    of that type: `[x], [y], [x, x] -> [x, y, x], [[0], [1], [0, 2]]`.
    """

    def tagged(avals: Sequence[AbstractValue]) -> list[tuple[AbstractValue, int]]:
        counts: dict[AbstractValue, itertools.count[int]] = {}
        return [(a, next(counts.setdefault(a, itertools.count()))) for a in avals]

    tags = [tagged(avals) for avals in per_branch]
    slots = list(dict.fromkeys(t for branch in tags for t in branch))
    index = {t: i for i, t in enumerate(slots)}
    return [a for a, _ in slots], [[index[t] for t in branch] for branch in tags]


def join_outputs(
    closed: ClosedJaxpr, all_res: Sequence[AbstractValue], slots: Sequence[int], n_out: int
) -> ClosedJaxpr:
    """`closed` (`-> [*outs, *its residuals]`) returning every merged residual slot, the
    slots it does not fill holding `empty2` (built for every slot, as JAX's).

    Not memoized: as JAX's, two branches running the same function get two jaxprs.
    """

    def fun(*args: Any) -> list[Any]:
        outs = eval_jaxpr(closed, (), *args)
        res = [empty_like_aval(a) for a in all_res]
        for slot, r in zip(slots, outs[n_out:], strict=True):
            res[slot] = r
        return [*outs[:n_out], *res]

    return trace_to_jaxpr(fun, closed.in_avals, closed.jaxpr.debug_info)


def join_inputs(
    closed: ClosedJaxpr, all_res: Sequence[AbstractValue], slots: Sequence[int]
) -> ClosedJaxpr:
    """`closed` (`[*its residuals, *ins] ->`) taking every merged residual slot first."""
    j = closed.jaxpr
    n = len(slots)
    binders: list[Var] = [Var(a) for a in all_res]
    for slot, v in zip(slots, j.invars[:n], strict=True):
        binders[slot] = v
    return ClosedJaxpr(j.replace(invars=(*binders, *j.invars[n:])), closed.consts)


def _join(
    producers: Sequence[ClosedJaxpr],
    consumers: Sequence[ClosedJaxpr],
    res_avals: Sequence[Sequence[AbstractValue]],
    n_out: int,
) -> tuple[Branches, Branches, int]:
    all_res, per_branch = merge_branch_residuals(res_avals)
    joined_out = tuple(
        join_outputs(p, all_res, s, n_out) for p, s in zip(producers, per_branch, strict=True)
    )
    joined_in = tuple(
        join_inputs(c, all_res, s) for c, s in zip(consumers, per_branch, strict=True)
    )
    return joined_out, joined_in, len(all_res)


# --- linearization -----------------------------------------------------------------------


def _cond_linearize(nonzeros: Sequence[bool], index: Any, *ops: Any, branches: Branches) -> Any:
    ops_nz = tuple(
        nz and not is_float0(a.to_tangent_aval())
        for nz, a in zip(nonzeros[1:], branches[0].in_avals, strict=True)
    )
    no_inst = (False,) * len(branches[0].out_avals)
    per_branch = [
        linearize_jaxpr_forwarding(b, ops_nz, no_inst, False).out_nonzeros for b in branches
    ]
    out_nz = tuple(any(col) for col in zip(*per_branch, strict=True))
    lins = [linearize_jaxpr_forwarding(b, ops_nz, out_nz, False) for b in branches]
    n_out = len(out_nz)
    primal_branches, tangent_branches, _ = _join(
        [lin.primal for lin in lins],
        [lin.tangent for lin in lins],
        [lin.primal.out_avals[n_out:] for lin in lins],
        n_out,
    )
    outs = cond_p.bind(index, *ops, branches=primal_branches)
    primals_out, residuals = outs[:n_out], outs[n_out:]

    def linearized(res: Sequence[Any], *tangents: Any) -> list[Any]:
        nz_tangents = [t for t, nz in zip(tangents[1:], ops_nz, strict=True) if nz]
        nz_out = cond_p.bind(*res, *nz_tangents, branches=tangent_branches)
        return split_jvp_outs([*primals_out, *nz_out], out_nz)[1]

    return primals_out, list(out_nz), [index, *residuals], linearized


linearization_rules.set(cond_p, _cond_linearize)

# --- transposition -----------------------------------------------------------------------


def _cond_transpose(cts: Sequence[Any], index: Any, *args: Any, branches: Branches) -> list[Any]:
    assert not is_undefined(index)
    linear = tuple(is_undefined(a) for a in args)
    known = [a for a in args if not is_undefined(a)]
    known_avals = tuple(typeof(k) for k in known)
    ct_avals = tuple(None if type(c) is Zero else typeof(c) for c in cts)
    nz_cts = [c for c in cts if type(c) is not Zero]
    per_branch = [transpose_jaxpr(b, linear, known_avals, ct_avals)[1] for b in branches]
    inst = tuple(any(col) for col in zip(*per_branch, strict=True))
    transposed = tuple(transpose_jaxpr(b, linear, known_avals, ct_avals, inst)[0] for b in branches)
    outs = cond_p.bind(index, *known, *nz_cts, branches=transposed)
    return [None, *cotangents_per_arg(args, inst, outs)]


transpose_rules.set(cond_p, _cond_transpose)

# --- partial evaluation (a cond met by a jvp rule, or in a loop body being split) -----------


def _cond_partial_eval(trace: SplitTrace, index: Any, *ops: Any, branches: Branches) -> list[Any]:
    if trace.is_unknown(index):
        return list(trace.bind_unknown(cond_p, [index, *ops], {"branches": branches}))
    ops_uk = [trace.is_unknown(o) for o in ops]
    per_branch = [partial_eval_jaxpr_nounits(b, ops_uk, False)[2] for b in branches]
    out_uk = [any(col) for col in zip(*per_branch, strict=True)]
    splits = [partial_eval_jaxpr_nounits(b, ops_uk, out_uk) for b in branches]
    n_known_out = len(out_uk) - sum(out_uk)
    known_branches, unknown_branches, n_res = _join(
        [s[0] for s in splits], [s[1] for s in splits], [s[3] for s in splits], n_known_out
    )
    known_ops = [o for o, uk in zip(ops, ops_uk, strict=True) if not uk]
    known_outs = trace.bind_known(cond_p, [index, *known_ops], {"branches": known_branches})
    residuals = known_outs[n_known_out:]
    unknown_ops = [o for o, uk in zip(ops, ops_uk, strict=True) if uk]
    unknown_outs = iter(
        trace.bind_unknown(
            cond_p, [index, *residuals, *unknown_ops], {"branches": unknown_branches}
        )
    )
    known_it = iter(known_outs[:n_known_out])
    assert len(residuals) == n_res
    return [next(unknown_outs) if uk else next(known_it) for uk in out_uk]


partial_eval_rules.set(cond_p, _cond_partial_eval)

# --- policy partial evaluation (a cond inside a checkpointed function) ---------------------


def _cond_partial_eval_custom(
    saveable: Policy, unks_in: Sequence[bool], inst_in: Sequence[bool], eqn: JaxprEqn
) -> PartialEvalCustomResult:
    index_uk, *ops_uk = unks_in
    branches: Branches = eqn.params["branches"]
    # The staged cond takes every operand: those not yet available to it become residuals.
    new_inst = [
        x for x, inst in zip(eqn.invars, inst_in, strict=True) if isinstance(x, Var) and not inst
    ]
    n_out = len(branches[0].out_avals)
    if index_uk:
        return None, eqn, [True] * n_out, [True] * n_out, new_inst

    def split(b: ClosedJaxpr, out_uk: Sequence[bool] | bool) -> Any:
        return partial_eval_jaxpr_custom(b.jaxpr, ops_uk, True, out_uk, True, saveable)

    out_uk = [False] * n_out
    for b in branches:
        out_uk = [a or c for a, c in zip(out_uk, split(b, False)[2], strict=True)]
    splits = [split(b, out_uk) for b in branches]
    known = [ClosedJaxpr(k, b.consts) for (k, *_), b in zip(splits, branches, strict=True)]
    staged = [ClosedJaxpr(st, b.consts) for (_, st, *_), b in zip(splits, branches, strict=True)]
    res_avals = [c.in_avals[: sp[4]] for c, sp in zip(staged, splits, strict=True)]
    n_known_out = n_out - sum(out_uk)
    known_branches, staged_branches, _ = _join(known, staged, res_avals, n_known_out)
    res_vars = [Var(a) for a in known_branches[0].out_avals[n_known_out:]]
    known_ins = [x for x, uk in zip(eqn.invars, unks_in, strict=True) if not uk]
    known_outs = [v for v, uk in zip(eqn.outvars, out_uk, strict=True) if not uk]
    eqn_known = eqn.replace(
        invars=tuple(known_ins),
        outvars=(*known_outs, *res_vars),
        params={**eqn.params, "branches": known_branches},
        effects=frozenset().union(*(b.effects for b in known_branches)),
    )
    inst_out = splits[0][3]
    eqn_staged = eqn.replace(
        invars=(eqn.invars[0], *res_vars, *eqn.invars[1:]),
        outvars=tuple(v for v, i in zip(eqn.outvars, inst_out, strict=True) if i),
        params={**eqn.params, "branches": staged_branches},
        effects=frozenset().union(*(b.effects for b in staged_branches)),
    )
    return eqn_known, eqn_staged, out_uk, inst_out, [*new_inst, *res_vars]


partial_eval_jaxpr_custom_rules.set(cond_p, _cond_partial_eval_custom)

# --- dead-code elimination ---------------------------------------------------------------

_dce_cache: _Cache = weakref.WeakKeyDictionary()


def _dce_branch(closed: ClosedJaxpr, used_outputs: tuple[bool, ...], keep: tuple[bool, ...]) -> Any:
    def make() -> tuple[ClosedJaxpr, list[bool]]:
        jaxpr, used = dce_jaxpr_keeping(closed.jaxpr, used_outputs, keep)
        if jaxpr is closed.jaxpr:
            return closed, used
        return ClosedJaxpr(jaxpr, closed.consts), used

    return memo(_dce_cache, closed, (used_outputs, keep), make)


def _cond_dce(used_outputs: list[bool], eqn: JaxprEqn) -> tuple[list[bool], JaxprEqn | None]:
    if not any(used_outputs) and not eqn.effects:
        return [False] * len(eqn.invars), None
    branches: Branches = eqn.params["branches"]
    used_out = tuple(used_outputs)
    nothing = (False,) * len(branches[0].in_avals)
    used_in = [False] * len(nothing)
    for b in branches:
        used_in = [
            a or b_ for a, b_ in zip(used_in, _dce_branch(b, used_out, nothing)[1], strict=True)
        ]
    keep = tuple(used_in)
    trimmed = tuple(_dce_branch(b, used_out, keep)[0] for b in branches)
    if all(t is b for t, b in zip(trimmed, branches, strict=True)):
        return [True, *used_in], eqn
    new = eqn.replace(
        invars=tuple(v for v, u in zip(eqn.invars, [True, *used_in], strict=True) if u),
        outvars=tuple(v for v, u in zip(eqn.outvars, used_outputs, strict=True) if u),
        params={**eqn.params, "branches": trimmed},
        effects=frozenset().union(*(b.effects for b in trimmed)),
    )
    return [True, *used_in], new


dce_rules.set(cond_p, _cond_dce)

__all__ = ["join_inputs", "join_outputs", "merge_branch_residuals"]
