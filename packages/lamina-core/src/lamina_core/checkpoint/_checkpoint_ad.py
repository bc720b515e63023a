"""Reverse mode of `remat2`: splitting a jvp'd remat by its policy, and transposing it.

Linearization meets the `remat2` that `checkpoint`'s jvp rule binds under `SplitTrace`, with
the primals known and the tangents unknown. `_remat_partial_eval` splits its body with
`partial_eval_jaxpr_custom` and the policy, as JAX's `remat_partial_eval`: the known half
(primal outputs and the values the policy saves) runs inline, outside any remat; each saved
float residual the known half also reads is rounded by an explicit `reduce_precision`; the
rest, which recomputes every unsaved value, is staged as `remat2[differentiated=True]` taking
`[*residuals, *tangent-side ins]`. Transposing that remat partially evaluates its body once
more (recomputing the non-linear part) inside a new `remat2`.

Also here: the policy-splitting rules of equations holding jaxprs that a remat body may
contain (a nested `remat2`, a `jit`).
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core.checkpoint._checkpoint import (
    PreventCse,
    bind_remat,
    cached,
    close_jaxpr,
    dce,
    open_jaxpr,
    partition,
    remat_p,
)
from lamina_core.checkpoint._policies import nothing_saveable
from lamina_core.interpreters import (
    Policy,
    SplitTrace,
    UndefinedPrimal,
    Zero,
    backward_pass,
    call_partial_eval_custom_rule,
    closed_call_partial_eval_custom_rule,
    cotangents_per_arg,
    is_undefined,
    partial_eval_jaxpr_custom,
    partial_eval_jaxpr_custom_rules,
    partial_eval_jaxpr_nounits,
    partial_eval_rules,
    trace_to_jaxpr,
    transpose_rules,
)
from lamina_core.ir import (
    AbstractValue,
    ClosedJaxpr,
    Jaxpr,
    JaxprEqn,
    ShapedArray,
    Var,
    dtypes,
    named_scope,
)
from lamina_core.lax import reduce_precision_p
from lamina_core.trace import eval_jaxpr, running_under
from lamina_core.transforms import jit_p, jit_params

_Cache = weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], Any]]

# --- reverse mode: splitting a jvp'd remat -----------------------------------------------------


class _RematSplit:
    """How a remat body splits for some unknown inputs: a known jaxpr computing the known
    outputs and residuals (reduce_precision inserted), and the staged body."""

    __slots__ = ("in_used_known", "in_used_staged", "known", "num_res", "out_unknowns", "staged")

    def __init__(
        self,
        known: Jaxpr,
        in_used_known: list[bool],
        staged: Jaxpr,
        in_used_staged: list[bool],
        out_unknowns: list[bool],
        num_res: int,
    ) -> None:
        self.known = known
        self.in_used_known = in_used_known
        self.staged = staged
        self.in_used_staged = in_used_staged
        self.out_unknowns = out_unknowns
        self.num_res = num_res


_split_cache: _Cache = weakref.WeakKeyDictionary()


def _split_remat(jaxpr: Jaxpr, unknowns: tuple[bool, ...], policy: Policy) -> _RematSplit:
    def make() -> _RematSplit:
        known, staged, out_unknowns, out_inst, num_res = partial_eval_jaxpr_custom(
            jaxpr, unknowns, True, False, False, policy
        )
        _, out_inst_unknown = partition(out_inst, out_unknowns)
        staged, in_used_staged = dce(staged, tuple(out_inst_unknown))
        used_res, in_used_staged = in_used_staged[:num_res], in_used_staged[num_res:]
        n_known_out = len(out_unknowns) - sum(out_unknowns)
        known, in_used_known = dce(known, (True,) * n_known_out + tuple(used_res))
        n_res = sum(used_res)
        return _RematSplit(
            _insert_reduce_precision(known, n_res),
            in_used_known,
            staged,
            in_used_staged,
            out_unknowns,
            n_res,
        )

    result: _RematSplit = cached(_split_cache, jaxpr, (unknowns, policy), make)
    return result


def _rounding_params(aval: AbstractValue) -> dict[str, int] | None:
    if not isinstance(aval, ShapedArray) or not dtypes.issubdtype(aval.dtype, np.inexact):
        return None
    finfo = dtypes.finfo(aval.dtype)
    return {"exponent_bits": int(finfo.nexp), "mantissa_bits": int(finfo.nmant)}


def _insert_reduce_precision(jaxpr: Jaxpr, num_res: int) -> Jaxpr:
    """`jaxpr` with each float residual the known side also reads rounded to its dtype.

    XLA may keep a value in excess precision where it is computed; saving it and recomputing
    it could then disagree. As JAX (#22244), the producer's output is renamed and the original
    variable rebound to its `reduce_precision`, so every reader sees the rounded value.
    """
    res_vars = jaxpr.outvars[len(jaxpr.outvars) - num_res :]
    used = {x for e in jaxpr.eqns for x in e.invars if isinstance(x, Var)}
    invars, constvars, eqns = list(jaxpr.invars), list(jaxpr.constvars), list(jaxpr.eqns)
    changed = False
    for v in res_vars:
        params = _rounding_params(v.aval)
        if params is None or not isinstance(v, Var) or v not in used:
            continue
        fresh = Var(v.aval)
        if v in constvars or v in invars:
            binders = constvars if v in constvars else invars
            binders[binders.index(v)] = fresh
            eqns.insert(0, JaxprEqn((fresh,), (v,), reduce_precision_p, params))
        else:
            index = next(i for i, e in enumerate(eqns) if v in e.outvars)
            eqn = eqns[index]
            if eqn.primitive is reduce_precision_p and dict(eqn.params) == params:
                continue
            eqns[index] = eqn.replace(outvars=tuple(fresh if o is v else o for o in eqn.outvars))
            eqns.insert(
                index + 1,
                JaxprEqn((fresh,), (v,), reduce_precision_p, params, source_info=eqn.source_info),
            )
        changed = True
    if not changed:
        return jaxpr
    return jaxpr.replace(invars=invars, constvars=constvars, eqns=eqns)


def _remat_partial_eval(
    trace: SplitTrace,
    *args: Any,
    jaxpr: Jaxpr,
    prevent_cse: PreventCse,
    differentiated: bool,
    policy: Any,
) -> list[Any]:
    unknowns = tuple(trace.is_unknown(a) for a in args)
    split = _split_remat(jaxpr, unknowns, policy or nothing_saveable)
    known_args = [a for a, u in zip(args, unknowns, strict=True) if not u]
    in_consts = [a for a, used in zip(known_args, split.in_used_known, strict=True) if used]
    parent = trace.parent
    assert parent is not None
    # The known half (primal outputs and residuals) runs outside the remat, as JAX's does.
    with running_under(parent):
        values = eval_jaxpr(split.known, (), *in_consts)
    n_known = len(values) - split.num_res
    known_outs, residuals = values[:n_known], values[n_known:]
    staged_args = [a for a, used in zip(args, split.in_used_staged, strict=True) if used]
    if isinstance(prevent_cse, tuple):
        _, kept = partition(split.in_used_staged, prevent_cse)
        prevent_cse = (True,) * len(residuals) + tuple(kept)
    params = {
        "jaxpr": split.staged,
        "prevent_cse": prevent_cse,
        "differentiated": True,
        "policy": policy,
    }
    staged_outs = iter(
        trace.bind_unknown(remat_p, [*residuals, *staged_args], params, absolute_names=True)
    )
    known_iter = iter(known_outs)
    return [next(staged_outs) if u else next(known_iter) for u in split.out_unknowns]


partial_eval_rules.set(remat_p, _remat_partial_eval)


# --- policy partial evaluation of jaxprs containing remat2 or jit ------------------------------


def _remat_custom_params(
    unks_in: Sequence[bool],
    inst_in: Sequence[bool],
    kept_outs_known: Sequence[bool],
    kept_outs_staged: Sequence[bool],
    num_res: int,
    params_known: dict[str, Any],
    params_staged: dict[str, Any],
) -> tuple[dict[str, Any], dict[str, Any]]:
    prevent_cse = params_known["prevent_cse"]
    if isinstance(prevent_cse, tuple):
        known_cse, _ = partition(unks_in, prevent_cse)
        _, staged_cse = partition(inst_in, prevent_cse)
        params_known = {**params_known, "prevent_cse": tuple(known_cse)}
        params_staged = {**params_staged, "prevent_cse": tuple(staged_cse)}
    return params_known, {**params_staged, "differentiated": True}


partial_eval_jaxpr_custom_rules.set(
    remat_p, functools.partial(call_partial_eval_custom_rule, "jaxpr", _remat_custom_params)
)


def _jit_custom_params(
    unks_in: Sequence[bool],
    inst_in: Sequence[bool],
    kept_outs_known: Sequence[bool],
    kept_outs_staged: Sequence[bool],
    num_res_in: int,
    num_res: int,
    params_known: dict[str, Any],
    params_staged: dict[str, Any],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The known and staged `jit`s' params: same options, arity of their new callees."""

    def rebuilt(params: dict[str, Any], donated: Sequence[bool]) -> dict[str, Any]:
        new = jit_params(
            params["jaxpr"],
            params["name"],
            donated_invars=donated,
            keep_unused=params["keep_unused"],
            inline=params["inline"],
        )
        new["ctx_mesh"] = params["ctx_mesh"]
        new["compiler_options_kvs"] = params["compiler_options_kvs"]
        return new

    donated_known, _ = partition(unks_in, params_known["donated_invars"])
    _, donated_staged = partition(inst_in, params_staged["donated_invars"])
    return (
        rebuilt(params_known, donated_known),
        rebuilt(params_staged, [False] * num_res_in + donated_staged),
    )


partial_eval_jaxpr_custom_rules.set(
    jit_p, functools.partial(closed_call_partial_eval_custom_rule, "jaxpr", _jit_custom_params)
)


# --- transposition -----------------------------------------------------------------------------


_transpose_cache: _Cache = weakref.WeakKeyDictionary()


def _transpose_jaxpr(
    closed: ClosedJaxpr, in_lin: tuple[bool, ...], out_zeros: tuple[bool, ...]
) -> tuple[ClosedJaxpr, list[bool]]:
    """`[*non-linear ins, *nonzero cts] -> nonzero cts of the linear ins`, and which are zero.

    The body is partially evaluated: its non-linear part is recomputed here (this is where a
    rematerialized value is computed again), then its linear part is transposed.
    """

    def make() -> tuple[ClosedJaxpr, list[bool]]:
        in_zeros: list[bool] = []
        n_known = len(in_lin) - sum(in_lin)

        def transposed(*args: Any) -> list[Any]:
            ins, out_cts_nz = args[:n_known], iter(args[n_known:])
            known, lin, out_unknowns, res_avals = partial_eval_jaxpr_nounits(
                closed, in_lin, instantiate=False
            )
            with named_scope("rematted_computation"):  # JAX names the recomputation so
                values = eval_jaxpr(known, (), *ins)
            residuals = values[len(values) - len(res_avals) :]
            out_cts = [
                Zero(a.to_tangent_aval()) if zero else next(out_cts_nz)
                for a, zero in zip(closed.out_avals, out_zeros, strict=True)
            ]
            lin_cts = [c for c, u in zip(out_cts, out_unknowns, strict=True) if u]
            dummies = [UndefinedPrimal(a) for a in lin.in_avals[len(residuals) :]]
            in_cts = backward_pass(lin.jaxpr, lin.consts, [*residuals, *dummies], lin_cts)
            in_zeros.extend(type(c) is Zero for c in in_cts)
            return [c for c in in_cts if type(c) is not Zero]

        in_avals = [a for a, lin in zip(closed.in_avals, in_lin, strict=True) if not lin] + [
            a.to_tangent_aval()
            for a, zero in zip(closed.out_avals, out_zeros, strict=True)
            if not zero
        ]
        jaxpr = trace_to_jaxpr(transposed, in_avals, closed.jaxpr.debug_info)
        return jaxpr, in_zeros

    result: tuple[ClosedJaxpr, list[bool]] = cached(
        _transpose_cache, closed, (in_lin, out_zeros), make
    )
    return result


def _remat_transpose(
    cts: Sequence[Any],
    *args: Any,
    jaxpr: Jaxpr,
    prevent_cse: PreventCse,
    differentiated: bool,
    policy: Any,
) -> list[Any]:
    in_lin = tuple(is_undefined(a) for a in args)
    out_zeros = tuple(type(c) is Zero for c in cts)
    transposed, in_zeros = _transpose_jaxpr(close_jaxpr(jaxpr), in_lin, out_zeros)
    known = [a for a in args if not is_undefined(a)]
    nz_cts = [c for c in cts if type(c) is not Zero]
    if isinstance(prevent_cse, tuple):
        known_cse, _ = partition(in_lin, prevent_cse)
        prevent_cse = tuple(known_cse) + (True,) * len(nz_cts)
    consts = transposed.consts
    if isinstance(prevent_cse, tuple):
        prevent_cse = (False,) * len(consts) + prevent_cse
    outs = bind_remat(
        [*consts, *known, *nz_cts], open_jaxpr(transposed), prevent_cse, differentiated, policy
    )
    return cotangents_per_arg(args, (not zero for zero in in_zeros), outs)


transpose_rules.set(remat_p, _remat_transpose)

__all__: list[str] = []
