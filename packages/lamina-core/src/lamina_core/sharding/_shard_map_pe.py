"""Partial evaluation and dead-code elimination of `shard_map`, as JAX 0.10.2's.

Partial evaluation (a `shard_map` met with some operands unknown, e.g. by
`partial_eval_jaxpr_nounits`) splits the body: a known `shard_map` returning `[*known outs,
*residuals]` and an unknown one taking `[*residuals, *unknown operands]` (JAX's
`_shard_map_partial_eval`). Residuals that are known operands or outputs are passed along
rather than returned; the others leave concatenated along axis 0 over every newly manual mesh
axis, scalars with a leading axis of size 1 the unknown body squeezes away.

DCE drops a `shard_map`'s unread outputs, the body equations only they needed and the
operands no longer read (JAX's `_shard_map_dce`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lamina_core.interpreters import (
    SplitTrace,
    dce_jaxpr,
    dce_rules,
    partial_eval_jaxpr_custom,
    partial_eval_jaxpr_custom_rules,
    partial_eval_jaxpr_nounits,
    partial_eval_rules,
)
from lamina_core.ir import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Var
from lamina_core.sharding._shard_map import manual_axes_env, shard_map_p, unshard_aval
from lamina_core.sharding._shard_map_ad import (
    add_singleton,
    body_params,
    fresh_residual_specs,
    gather_residuals,
    promote_scalar_residuals,
    remove_singleton,
    trace_body,
)
from lamina_core.trace import eval_jaxpr

# --- partial evaluation ---------------------------------------------------------------------


def _shard_map_partial_eval(trace: SplitTrace, *args: Any, **params: Any) -> list[Any]:
    jaxpr: Jaxpr = params["jaxpr"]
    mesh, manual = params["mesh"], params["newly_manual_axes"]
    in_specs, out_specs = params["in_specs"], params["out_specs"]
    unknowns = tuple(trace.is_unknown(a) for a in args)
    with manual_axes_env(mesh, manual, params["check_vma"]):
        known, unknown, out_unknowns, res_avals = partial_eval_jaxpr_nounits(
            ClosedJaxpr(jaxpr, []), unknowns, instantiate=False
        )
    kj = known.jaxpr
    n_known_out = len(kj.outvars) - len(res_avals)
    known_outs, res_atoms = kj.outvars[:n_known_out], kj.outvars[n_known_out:]
    invars = {v: i for i, v in enumerate(kj.invars)}
    in_fwd = [invars.get(a) if isinstance(a, Var) else None for a in res_atoms]
    out_fwd = [
        known_outs.index(a) if isinstance(a, Var) and a in known_outs and f is None else None
        for a, f in zip(res_atoms, in_fwd, strict=True)
    ]
    fresh = [f1 is None and f2 is None for f1, f2 in zip(in_fwd, out_fwd, strict=True)]
    promote = [w and not getattr(a, "shape", ()) for w, a in zip(fresh, res_avals, strict=True)]
    n_out = n_known_out

    def known_body(*ins: Any) -> list[Any]:
        outs = eval_jaxpr(known, (), *ins)
        res = [r for r, w in zip(outs[n_out:], fresh, strict=True) if w]
        return [*outs[:n_out], *(add_singleton(r) if not r.shape else r for r in res)]

    known_body_jaxpr = trace_body(
        known_body, known.in_avals, jaxpr.debug_info, mesh, manual, params["check_vma"]
    )
    known_in_specs = [s for s, u in zip(in_specs, unknowns, strict=True) if not u]
    known_out_specs = [s for s, u in zip(out_specs, out_unknowns, strict=True) if not u]
    specs = fresh_residual_specs(
        mesh, manual, params["check_vma"], known_body_jaxpr.jaxpr.out_avals[n_out:]
    )
    consts, kparams = body_params(
        known_body_jaxpr, known_in_specs, [*known_out_specs, *specs], params
    )
    known_args = [a for a, u in zip(args, unknowns, strict=True) if not u]
    outs = trace.bind_known(shard_map_p, [*consts, *known_args], kparams)
    known_vals = outs[:n_out]
    residuals, res_specs = gather_residuals(
        in_fwd,
        out_fwd,
        known_args,
        known_in_specs,
        known_vals,
        known_out_specs,
        outs[n_out:],
        specs,
    )
    unknown_body = promote_scalar_residuals(unknown.jaxpr, promote, params)
    unknown_in_specs = [s for s, u in zip(in_specs, unknowns, strict=True) if u]
    unknown_out_specs = [s for s, u in zip(out_specs, out_unknowns, strict=True) if u]
    consts, uparams = body_params(
        unknown_body, [*res_specs, *unknown_in_specs], unknown_out_specs, params
    )
    unknown_args = [a for a, u in zip(args, unknowns, strict=True) if u]
    unknown_outs = iter(
        trace.bind_unknown(shard_map_p, [*consts, *residuals, *unknown_args], uparams)
    )
    known_it = iter(known_vals)
    return [next(unknown_outs) if u else next(known_it) for u in out_unknowns]


partial_eval_rules.set(shard_map_p, _shard_map_partial_eval)


# --- partial evaluation by a policy (remat) -----------------------------------------------


def _with_singleton_residuals(
    known: Jaxpr, staged: Jaxpr, which: Sequence[bool], params: dict[str, Any]
) -> tuple[Jaxpr, Jaxpr]:
    """Scalar residuals the known body returns get a leading axis of size 1 (so they can be
    concatenated over the mesh), which the staged body squeezes away (JAX's `_add_reshapes`).
    `which` flags the staged body's leading residual inputs that the known body returns."""
    scalar = [
        w and not getattr(v.aval, "shape", ()) for w, v in zip(which, staged.invars, strict=False)
    ]
    if not any(scalar):
        return known, staged
    mesh, manual = params["mesh"], params["newly_manual_axes"]
    check_vma: bool = params["check_vma"]
    n_res = sum(which)

    def known_fun(*args: Any) -> list[Any]:
        outs = eval_jaxpr(known, [], *args)
        head, res = outs[: len(outs) - n_res], outs[len(outs) - n_res :]
        return [*head, *(r if r.shape else add_singleton(r) for r in res)]

    k = trace_body(known_fun, known.in_avals, known.debug_info, mesh, manual, check_vma)
    n = len(which)
    avals = [
        v.aval.inc_rank(1, 0) if s else v.aval
        for v, s in zip(staged.invars[:n], scalar, strict=True)
    ]

    def staged_fun(*args: Any) -> list[Any]:
        res = [remove_singleton(x) if s else x for x, s in zip(args[:n], scalar, strict=True)]
        return eval_jaxpr(staged, [], *res, *args[n:])

    st = trace_body(
        staged_fun,
        [*avals, *(v.aval for v in staged.invars[n:])],
        staged.debug_info,
        mesh,
        manual,
        check_vma,
    )
    return _opened(k), _opened(st)


def _opened(closed: ClosedJaxpr) -> Jaxpr:
    j = closed.jaxpr
    if closed.consts:
        raise ValueError("shard_map: a rematerialized body closed over traced values")
    return j


def _shard_map_pe_custom(
    saveable: Any, unks_in: Sequence[bool], inst_in: Sequence[bool], eqn: JaxprEqn
) -> Any:
    params = dict(eqn.params)
    jaxpr: Jaxpr = params["jaxpr"]
    mesh, manual = params["mesh"], params["newly_manual_axes"]
    with manual_axes_env(mesh, manual, params["check_vma"]):
        known, staged, unks_out, inst_out, num_res = partial_eval_jaxpr_custom(
            jaxpr, unks_in, inst_in, False, False, saveable
        )
    n_out = len(known.outvars) - num_res
    out_vars, res_vars = known.outvars[:n_out], known.outvars[n_out:]
    index = {id(v): i for i, v in enumerate(known.invars)}
    in_fwd = [index.get(id(v)) for v in res_vars]
    out_binders_known = [b for b, u in zip(eqn.outvars, unks_out, strict=True) if not u]
    out_index = {
        id(v): i
        for i, (v, b) in enumerate(zip(out_vars, out_binders_known, strict=True))
        if not isinstance(b, DropVar)
    }
    out_fwd = [out_index.get(id(v)) for v in res_vars]
    which = [f1 is None and f2 is None for f1, f2 in zip(in_fwd, out_fwd, strict=True)]
    known = known.replace(
        outvars=(*out_vars, *(r for r, w in zip(res_vars, which, strict=True) if w))
    )
    with manual_axes_env(mesh, manual, params["check_vma"]):
        known, _ = dce_jaxpr(known, [True] * len(known.outvars), prune_invars=False)
    known, staged = _with_singleton_residuals(known, staged, which, params)
    ins_known = [x for x, u in zip(eqn.invars, unks_in, strict=True) if not u]
    in_specs_known = [s for s, u in zip(params["in_specs"], unks_in, strict=True) if not u]
    out_specs_known = [s for s, u in zip(params["out_specs"], unks_out, strict=True) if not u]
    fresh_avals = [v.aval for v, w in zip(staged.invars[:num_res], which, strict=True) if w]
    specs = fresh_residual_specs(mesh, manual, params["check_vma"], fresh_avals)
    residuals = [
        Var(unshard_aval(mesh, params["check_vma"], s, a))
        for s, a in zip(specs, fresh_avals, strict=True)
    ]
    params_known = dict(
        params,
        jaxpr=known,
        in_specs=tuple(in_specs_known),
        out_specs=(*out_specs_known, *specs),
    )
    full_res, res_specs = gather_residuals(
        in_fwd,
        out_fwd,
        ins_known,
        in_specs_known,
        out_binders_known,
        out_specs_known,
        residuals,
        specs,
    )
    ins_staged = [x for x, i in zip(eqn.invars, inst_in, strict=True) if i]
    params_staged = dict(
        params,
        jaxpr=staged,
        in_specs=(
            *res_specs,
            *(s for s, i in zip(params["in_specs"], inst_in, strict=True) if i),
        ),
        out_specs=tuple(s for s, i in zip(params["out_specs"], inst_out, strict=True) if i),
    )
    eqn_known = eqn.replace(
        invars=tuple(ins_known),
        outvars=(*out_binders_known, *residuals),
        params=params_known,
        effects=known.effects,
    )
    eqn_staged = eqn.replace(
        invars=(*full_res, *ins_staged),
        outvars=tuple(b for b, i in zip(eqn.outvars, inst_out, strict=True) if i),
        params=params_staged,
        effects=staged.effects,
    )
    new_inst = [x for x, i in zip(eqn.invars, inst_in, strict=True) if isinstance(x, Var) and not i]
    new_inst += [out_binders_known[f] for f in sorted({f for f in out_fwd if f is not None})]
    return eqn_known, eqn_staged, unks_out, inst_out, [*new_inst, *residuals]


partial_eval_jaxpr_custom_rules.set(shard_map_p, _shard_map_pe_custom)


# --- dead-code elimination ------------------------------------------------------------------


def _shard_map_dce(
    used_outputs: Sequence[bool], eqn: JaxprEqn
) -> tuple[list[bool], JaxprEqn | None]:
    if not any(used_outputs) and not eqn.effects:
        return [False] * len(eqn.invars), None
    jaxpr: Jaxpr = eqn.params["jaxpr"]
    trimmed, used_inputs = dce_jaxpr(jaxpr, list(used_outputs), prune_invars=True)
    if not any(used_inputs) and not any(used_outputs) and not trimmed.effects:
        return used_inputs, None
    unchanged = len(trimmed.eqns) == len(jaxpr.eqns) and all(
        a is b for a, b in zip(trimmed.eqns, jaxpr.eqns, strict=True)
    )  # an inner equation (a loop's unused carry) may be trimmed in place: not unchanged
    if all(used_outputs) and all(used_inputs) and unchanged:
        return used_inputs, eqn
    params = dict(
        eqn.params,
        jaxpr=trimmed,
        in_specs=tuple(s for s, u in zip(eqn.params["in_specs"], used_inputs, strict=True) if u),
        out_specs=tuple(s for s, u in zip(eqn.params["out_specs"], used_outputs, strict=True) if u),
    )
    new = eqn.replace(
        invars=tuple(v for v, u in zip(eqn.invars, used_inputs, strict=True) if u),
        outvars=tuple(v for v, u in zip(eqn.outvars, used_outputs, strict=True) if u),
        params=params,
        effects=trimmed.effects,
    )
    return used_inputs, new


dce_rules.set(shard_map_p, _shard_map_dce)

__all__: list[str] = []
