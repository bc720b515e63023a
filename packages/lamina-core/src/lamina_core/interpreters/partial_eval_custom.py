"""Policy-driven partial evaluation of a jaxpr: JAX's `partial_eval_jaxpr_custom`.

Unlike `SplitTrace`, which computes every known value as soon as it can, this pass decides per
known equation (with a *policy*) whether its outputs are saved as residuals or recomputed by
the staged half, which is what rematerialization (`checkpoint`) needs. It is a pure
jaxpr-to-jaxpr pass: the known half is `known ins -> [*known outs, *residuals]` and the staged
half `[*residuals, *instantiated ins] -> instantiated outs`.

Each variable carries two flags: *unknown* (computed by the staged half only) and
*instantiated* (available to the staged half, as an input binder or by recomputation). A known,
not-instantiated variable the staged half reads becomes a residual. Equations holding jaxprs
split themselves with a rule from `partial_eval_jaxpr_custom_rules`; `call_partial_eval_custom_rule`
(open jaxpr parameter, e.g. `remat2`) and `closed_call_partial_eval_custom_rule` (closed jaxpr
parameter, e.g. `jit`) are the two generic ones. This module names no primitive.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, TypeAlias

from lamina_core.ir import (
    Atom,
    ClosedJaxpr,
    DropVar,
    Effects,
    Jaxpr,
    JaxprEqn,
    RuleTable,
    Var,
    no_effects,
)


class RecomputeType:
    """A policy's answer: recompute the equation's outputs in the staged half."""

    __slots__ = ()


class SaveableType:
    """A policy's answer: save the equation's outputs as residuals."""

    __slots__ = ()


Recompute = RecomputeType()
Saveable = SaveableType()


class Offloadable(NamedTuple):
    """A policy's answer: save the outputs in another memory (`src` to `dst`).

    Lamina has one memory per device (on CPU host memory is device memory), so an offloaded
    value is saved like a `Saveable` one.
    """

    src: str
    dst: str


RematCase: TypeAlias = RecomputeType | SaveableType | Offloadable
Policy: TypeAlias = Callable[..., Any]
"""`policy(prim, *in_avals, **params)`: a bool (True = save) or a `RematCase`."""


def ensure_enum(case: Any) -> RematCase:
    """A policy's answer as a `RematCase` (bools map to Saveable / Recompute)."""
    if isinstance(case, bool):
        return Saveable if case else Recompute
    if not isinstance(case, (RecomputeType, SaveableType, Offloadable)):
        msg = (
            "Value returned by a remat policy should be a bool or"
            " `ad_checkpoint.Recompute`, `ad_checkpoint.Saveable` or"
            " `ad_checkpoint.Offloadable(...)`."
            f" Got {case} of type {type(case)}."
        )
        if case is Offloadable:
            msg += "Did you return `Offloadable` instead of an instantiated `Offloadable(...)`?"
        raise TypeError(msg)
    return case


PartialEvalCustomResult: TypeAlias = tuple[
    JaxprEqn | None, JaxprEqn | None, Sequence[bool], Sequence[bool], list[Var]
]
PartialEvalCustomRule: TypeAlias = Callable[
    [Policy, Sequence[bool], Sequence[bool], JaxprEqn], PartialEvalCustomResult
]
"""`rule(saveable, unks_in, inst_in, eqn) -> (known eqn | None, staged eqn | None, unks_out,
inst_out, residuals)`; the residuals are variables the known side defines (or the eqn reads)
that the staged side reads."""

partial_eval_jaxpr_custom_rules: RuleTable[PartialEvalCustomRule] = RuleTable(
    "policy partial evaluation"
)

_Key: TypeAlias = tuple[Any, ...]
_jaxpr_cache: weakref.WeakKeyDictionary[Jaxpr, dict[_Key, Any]] = weakref.WeakKeyDictionary()
_closed_cache: weakref.WeakKeyDictionary[ClosedJaxpr, dict[_Key, Any]] = weakref.WeakKeyDictionary()


def _flags(value: bool | Sequence[bool], n: int) -> tuple[bool, ...]:
    return (value,) * n if isinstance(value, bool) else tuple(value)


def eqns_effects(eqns: Sequence[JaxprEqn]) -> Effects:
    return frozenset().union(*(e.effects for e in eqns)) if eqns else no_effects


def partial_eval_jaxpr_custom(
    jaxpr: Jaxpr,
    in_unknowns: Sequence[bool],
    in_inst: bool | Sequence[bool],
    ensure_out_unknowns: bool | Sequence[bool],
    ensure_out_inst: bool | Sequence[bool],
    saveable: Policy,
) -> tuple[Jaxpr, Jaxpr, list[bool], list[bool], int]:
    """Split `jaxpr` by which inputs are unknown, saving what `saveable` allows.

    Args:
      jaxpr: an open jaxpr (constvars count as known and instantiated).
      in_unknowns: which inputs only the staged half has.
      in_inst: which inputs the staged half also receives (unknown ones must be).
      ensure_out_unknowns / ensure_out_inst: outputs to make unknown / instantiated anyway.
      saveable: the policy, asked about each known equation.

    Returns:
      `(known, staged, out_unknowns, out_inst, num_res)`: the known half returns its known
      outputs then `num_res` residuals; the staged half takes those residuals then the
      instantiated inputs. Results are cached per jaxpr object, as JAX's are, so transforming
      one jaxpr twice gives the same jaxprs (printed once, as a shared `let`).
    """
    key = (
        tuple(in_unknowns),
        _flags(in_inst, len(jaxpr.invars)),
        _flags(ensure_out_unknowns, len(jaxpr.outvars)),
        _flags(ensure_out_inst, len(jaxpr.outvars)),
        saveable,
    )
    entries = _jaxpr_cache.setdefault(jaxpr, {})
    if key not in entries:
        entries[key] = _partial_eval_jaxpr_custom(jaxpr, *key)
    known, staged, out_unknowns, out_inst, num_res = entries[key]
    return known, staged, list(out_unknowns), list(out_inst), num_res


def _partial_eval_jaxpr_custom(
    jaxpr: Jaxpr,
    in_unknowns: tuple[bool, ...],
    in_inst: tuple[bool, ...],
    ensure_out_unknowns: tuple[bool, ...],
    ensure_out_inst: tuple[bool, ...],
    saveable: Policy,
) -> tuple[Jaxpr, Jaxpr, list[bool], list[bool], int]:
    env: dict[Var, tuple[bool, bool]] = {}
    # An ordered set: residual order is the order the staged half first needs them in.
    residuals: dict[Var, None] = {}

    def read(x: Atom) -> tuple[bool, bool]:
        return env[x] if isinstance(x, Var) else (False, True)

    def write(unknown: bool, inst: bool, v: Var) -> None:
        assert (unknown, inst) != (True, False)
        env[v] = (unknown, inst)

    def ensure_instantiated(inst: bool, x: Atom) -> Atom:
        if isinstance(x, Var) and not inst:
            residuals[x] = None
        return x

    known_eqns: list[JaxprEqn] = []
    staged_eqns: list[JaxprEqn] = []
    for v, unknown, inst in zip(jaxpr.invars, in_unknowns, in_inst, strict=True):
        write(unknown, inst, v)
    for v in jaxpr.constvars:
        write(False, True, v)
    for eqn in jaxpr.eqns:
        unks_in = [read(x)[0] for x in eqn.invars]
        inst_in = [read(x)[1] for x in eqn.invars]
        rule = partial_eval_jaxpr_custom_rules.get(eqn.primitive)
        if rule is not None:
            eqn1, eqn2, unks_out, inst_out, res = rule(saveable, unks_in, inst_in, eqn)
            if eqn1 is not None:
                known_eqns.append(eqn1)
            if eqn2 is not None:
                staged_eqns.append(eqn2)
            residuals.update(dict.fromkeys(res))
            for v, unknown, inst in zip(eqn.outvars, unks_out, inst_out, strict=True):
                write(unknown, inst, v)
        elif any(unks_in):
            ins = tuple(ensure_instantiated(i, x) for i, x in zip(inst_in, eqn.invars, strict=True))
            staged_eqns.append(eqn.replace(invars=ins))
            for v in eqn.outvars:
                write(True, True, v)
        else:
            known_eqns.append(eqn)
            case = ensure_enum(saveable(eqn.primitive, *[x.aval for x in eqn.invars], **eqn.params))
            # An effectful equation runs once, on the known side.
            if eqn.effects or not isinstance(case, RecomputeType):
                for v in eqn.outvars:
                    write(False, False, v)
            else:
                ins = tuple(
                    ensure_instantiated(i, x) for i, x in zip(inst_in, eqn.invars, strict=True)
                )
                staged_eqns.append(eqn.replace(invars=ins))
                for v in eqn.outvars:
                    write(False, True, v)
    out_unknowns = [read(x)[0] for x in jaxpr.outvars]
    out_inst = [read(x)[1] for x in jaxpr.outvars]
    for x, inst, ensure in zip(jaxpr.outvars, out_inst, ensure_out_inst, strict=True):
        if ensure:
            ensure_instantiated(inst, x)
    out_unknowns = [u or e for u, e in zip(out_unknowns, ensure_out_unknowns, strict=True)]
    out_inst = [i or e for i, e in zip(out_inst, ensure_out_inst, strict=True)]

    res = list(residuals)
    ins_known = [v for v, u in zip(jaxpr.invars, in_unknowns, strict=True) if not u]
    outs_known = [v for v, u in zip(jaxpr.outvars, out_unknowns, strict=True) if not u]
    debug = jaxpr.debug_info
    known = jaxpr.replace(
        invars=ins_known,
        outvars=[*outs_known, *res],
        eqns=known_eqns,
        effects=eqns_effects(known_eqns),
        debug_info=debug,
    )
    ins_staged = [v for v, i in zip(jaxpr.invars, in_inst, strict=True) if i]
    outs_staged = [v for v, i in zip(jaxpr.outvars, out_inst, strict=True) if i]
    staged = jaxpr.replace(
        invars=[*res, *ins_staged],
        outvars=outs_staged,
        eqns=staged_eqns,
        effects=eqns_effects(staged_eqns),
        debug_info=debug,
    )
    return known, staged, out_unknowns, out_inst, len(res)


def _split(flags: Sequence[bool], items: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """`items` where the flag is False, and where it is True (JAX's `partition_list`)."""
    lo = [x for f, x in zip(flags, items, strict=True) if not f]
    hi = [x for f, x in zip(flags, items, strict=True) if f]
    return lo, hi


ParamsUpdater: TypeAlias = Callable[..., tuple[dict[str, Any], dict[str, Any]]]
"""`updater(unks_in, inst_in, kept_outs_known, kept_outs_staged, num_res, params_known,
params_staged) -> (params_known, params_staged)` (the closed-call variant also gets the number
of residual inputs after forwarding, before `num_res`)."""


def call_partial_eval_custom_rule(
    param: str,
    params_updater: ParamsUpdater,
    saveable: Policy,
    unks_in: Sequence[bool],
    inst_in: Sequence[bool],
    eqn: JaxprEqn,
) -> PartialEvalCustomResult:
    """Split an equation whose `param` is an open jaxpr into a known and a staged copy."""
    jaxpr: Jaxpr = eqn.params[param]
    known, staged, unks_out, inst_out, num_res = partial_eval_jaxpr_custom(
        jaxpr, unks_in, inst_in, False, False, saveable
    )
    ins_known, _ = _split(unks_in, eqn.invars)
    out_binders_known, _ = _split(unks_out, eqn.outvars)
    _, ins_staged = _split(inst_in, eqn.invars)
    _, out_binders_staged = _split(inst_out, eqn.outvars)
    params_known, params_staged = params_updater(
        unks_in,
        inst_in,
        [not u for u in unks_out],
        inst_out,
        num_res,
        {**eqn.params, param: known},
        {**eqn.params, param: staged},
    )
    residuals = [Var(v.aval) for v in staged.invars[:num_res]]
    eqn_known = eqn.replace(
        invars=tuple(ins_known),
        outvars=(*out_binders_known, *residuals),
        params=params_known,
        effects=known.effects,
    )
    eqn_staged = eqn.replace(
        invars=(*residuals, *ins_staged),
        outvars=tuple(out_binders_staged),
        params=params_staged,
        effects=staged.effects,
    )
    new_inst = [x for x, i in zip(eqn.invars, inst_in, strict=True) if isinstance(x, Var) and not i]
    return eqn_known, eqn_staged, unks_out, inst_out, [*new_inst, *residuals]


class _ClosedSplit(NamedTuple):
    known: ClosedJaxpr
    staged: ClosedJaxpr
    unks_out: list[bool]
    inst_out: list[bool]
    num_res: int
    in_fwd: list[int | None]
    out_fwd: list[int | None]


def _closed_split(
    closed: ClosedJaxpr,
    unks_in: tuple[bool, ...],
    inst_in: tuple[bool, ...],
    no_in_fwd: tuple[bool, ...],
    no_out_fwd: tuple[bool, ...],
    saveable: Policy,
) -> _ClosedSplit:
    key = (unks_in, inst_in, no_in_fwd, no_out_fwd, saveable)
    entries = _closed_cache.setdefault(closed, {})
    if key in entries:
        found: _ClosedSplit = entries[key]
        return found
    known, staged, unks_out, inst_out, num_res = partial_eval_jaxpr_custom(
        closed.jaxpr, unks_in, inst_in, False, False, saveable
    )
    n_out = len(known.outvars) - num_res
    outs, res = known.outvars[:n_out], known.outvars[n_out:]
    # Residuals that are known inputs or (kept) known outputs are not returned twice.
    allowed_in, _ = _split(unks_in, no_in_fwd)
    in_index = {
        id(v): i for i, (v, no) in enumerate(zip(known.invars, allowed_in, strict=True)) if not no
    }
    in_fwd = [in_index.get(id(v)) for v in res]
    allowed_out, _ = _split(unks_out, no_out_fwd)
    out_index = {
        id(v): i for i, (v, no) in enumerate(zip(outs, allowed_out, strict=True)) if not no
    }
    out_fwd = [out_index.get(id(v)) for v in res]
    kept = [r for r, fi, fo in zip(res, in_fwd, out_fwd, strict=True) if fi is None and fo is None]
    known = known.replace(outvars=(*outs, *kept))
    split = _ClosedSplit(
        ClosedJaxpr(known, closed.consts),
        ClosedJaxpr(staged, closed.consts),
        unks_out,
        inst_out,
        num_res,
        in_fwd,
        out_fwd,
    )
    entries[key] = split
    return split


def closed_call_partial_eval_custom_rule(
    param: str,
    params_updater: ParamsUpdater,
    saveable: Policy,
    unks_in: Sequence[bool],
    inst_in: Sequence[bool],
    eqn: JaxprEqn,
) -> PartialEvalCustomResult:
    """Split an equation whose `param` is a closed jaxpr (a call such as `jit`).

    As JAX's rule of the same name: residuals the known call would only pass through (a known
    input, or one of its known outputs) are read where they already are instead.
    """
    no_out_fwd = tuple(isinstance(v, DropVar) for v in eqn.outvars)
    no_in_fwd = (False,) * len(unks_in)
    split = _closed_split(
        eqn.params[param], tuple(unks_in), tuple(inst_in), no_in_fwd, no_out_fwd, saveable
    )
    out_binders_known, _ = _split(split.unks_out, eqn.outvars)
    ins_known, _ = _split(unks_in, eqn.invars)
    _, ins_staged = _split(inst_in, eqn.invars)
    _, out_binders_staged = _split(split.inst_out, eqn.outvars)
    fwds = list(zip(split.in_fwd, split.out_fwd, strict=True))
    num_res_in = sum(fi is None and fo is None for fi, fo in fwds)
    params_known, params_staged = params_updater(
        unks_in,
        inst_in,
        [not u for u in split.unks_out],
        split.inst_out,
        num_res_in,
        split.num_res,
        {**eqn.params, param: split.known},
        {**eqn.params, param: split.staged},
    )
    res_avals = split.staged.in_avals[: split.num_res]
    binders = [
        Var(a)
        for a, fi, fo in zip(res_avals, split.in_fwd, split.out_fwd, strict=True)
        if fi is None and fo is None
    ]
    new_binders = iter(binders)
    res_vars: list[Atom] = [
        out_binders_known[fo]
        if fo is not None
        else ins_known[fi]
        if fi is not None
        else next(new_binders)
        for fi, fo in zip(split.in_fwd, split.out_fwd, strict=True)
    ]
    eqn_known = eqn.replace(
        invars=tuple(ins_known),
        outvars=(*out_binders_known, *binders),
        params=params_known,
        effects=split.known.effects,
    )
    eqn_staged = eqn.replace(
        invars=(*res_vars, *ins_staged),
        outvars=tuple(out_binders_staged),
        params=params_staged,
        effects=split.staged.effects,
    )
    new_inst = [x for x, i in zip(eqn.invars, inst_in, strict=True) if isinstance(x, Var) and not i]
    new_vars = [*new_inst, *[v for v in res_vars if isinstance(v, Var)]]
    return eqn_known, eqn_staged, split.unks_out, split.inst_out, new_vars


__all__ = [
    "Offloadable",
    "PartialEvalCustomRule",
    "Policy",
    "Recompute",
    "RecomputeType",
    "RematCase",
    "Saveable",
    "SaveableType",
    "call_partial_eval_custom_rule",
    "closed_call_partial_eval_custom_rule",
    "ensure_enum",
    "eqns_effects",
    "partial_eval_jaxpr_custom",
    "partial_eval_jaxpr_custom_rules",
]
