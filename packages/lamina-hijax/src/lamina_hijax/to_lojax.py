"""The to-lojax pass: a jaxpr with hi types and hi primitives becomes a jaxpr of arrays only.

Every hi-typed input becomes its arrays (`lo_ty`, in order) and every hi-typed output too. The
pass re-traces the jaxpr: a hi input's arrays are raised into a hi value (`raise_val`) whose
components are tracers, a hi primitive runs its `expand` on such values, and an equation of
arrays only is bound again as it is. Primitives holding jaxprs (`jit`, `scan`, `while`,
`cond`, calls) have rules in `to_lojax_rules`: `jit` stays one `jit` of the lowered callee,
loops and branches get lowered bodies with each hi carry or operand split into its arrays,
other calls are inlined. The runtime runs this pass first, so lamina-mlir lowers only arrays.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lamina_core.avals import AbstractValue
from lamina_core.call import closed_call_p, jit_p
from lamina_core.checkpoint import remat_p
from lamina_core.control_flow.conditionals import cond_p
from lamina_core.control_flow.loops import while_p
from lamina_core.control_flow.scan import scan_p
from lamina_core.custom_derivatives import custom_jvp_call_p, custom_vjp_call_p
from lamina_core.evaluate import install_high_impl
from lamina_core.interpreters.staging import trace_to_jaxpr
from lamina_core.jaxpr import (
    ClosedJaxpr,
    DebugInfo,
    Jaxpr,
    JaxprEqn,
    Literal,
    Var,
    jaxprs_in_params,
)
from lamina_core.primitive import Primitive, RuleTable
from lamina_hijax.primitives import HiPrimitive, call_hi_primitive_p, hi_primitives
from lamina_hijax.types import lo_avals

_high: weakref.WeakKeyDictionary[Jaxpr, bool] = weakref.WeakKeyDictionary()


def is_high(jaxpr: Jaxpr) -> bool:
    """True if `jaxpr` has hi-typed values or hi primitives anywhere, sub-jaxprs included
    (it must then be lowered to lojax before lamina-mlir sees it). Memoized per jaxpr."""
    known = _high.get(jaxpr)
    if known is None:
        known = _high[jaxpr] = (
            any(v.aval.is_high for v in (*jaxpr.constvars, *jaxpr.invars))
            or any(a.aval.is_high for a in jaxpr.outvars)
            or any(_eqn_is_high(e) for e in jaxpr.eqns)
        )
    return known


def _eqn_is_high(eqn: JaxprEqn) -> bool:
    return (
        eqn.primitive in hi_primitives
        or any(v.aval.is_high for v in eqn.outvars)
        or any(is_high(j) for j in jaxprs_in_params(eqn.params))
    )


# --- values across the boundary ---------------------------------------------------------------


def lower_values(avals: Sequence[AbstractValue], values: Sequence[Any]) -> list[Any]:
    """`values` (of types `avals`) with each hi value replaced by its arrays."""
    out: list[Any] = []
    for aval, x in zip(avals, values, strict=True):
        if aval.is_high:
            lo = list(aval.lower_val(x))  # type: ignore[attr-defined]  # HiType's protocol
            expected = aval.lo_ty()
            if len(lo) != len(expected):
                raise ValueError(
                    f"{type(aval).__name__}.lower_val gave {len(lo)} arrays for a value of type "
                    f"{aval.str_short()}, whose lo_ty has {len(expected)}"
                )
            out.extend(lo)
        else:
            out.append(x)
    return out


def raise_values(avals: Sequence[AbstractValue], lo_values: Sequence[Any]) -> list[Any]:
    """The values of types `avals` made of `lo_values` (hi ones from their arrays)."""
    out: list[Any] = []
    it = iter(lo_values)
    for aval in avals:
        if aval.is_high:
            parts = [next(it) for _ in aval.lo_ty()]
            out.append(aval.raise_val(*parts))  # type: ignore[attr-defined]  # HiType's protocol
        else:
            out.append(next(it))
    if next(it, None) is not None:
        raise ValueError("raise_values: more arrays than the types take")
    return out


def _counts(avals: Sequence[AbstractValue]) -> list[int]:
    return [len(a.lo_ty()) if a.is_high else 1 for a in avals]


def expand_per_value(items: Sequence[Any], avals: Sequence[AbstractValue]) -> tuple[Any, ...]:
    """A per-value setting (donation, sharding) repeated for each array of each value."""
    return tuple(x for x, n in zip(items, _counts(avals), strict=True) for _ in range(n))


@dataclass(frozen=True, slots=True)
class HiSignature:
    """How a lowered program's arrays map to a call's hi-typed arguments and results."""

    in_avals: tuple[AbstractValue, ...]
    out_avals: tuple[AbstractValue, ...]

    def lower_args(self, args: Sequence[Any]) -> list[Any]:
        return lower_values(self.in_avals, args)

    def raise_outs(self, outs: Sequence[Any]) -> list[Any]:
        return raise_values(self.out_avals, outs)


# --- the pass ----------------------------------------------------------------------------------

_memo: weakref.WeakKeyDictionary[Jaxpr, Jaxpr] = weakref.WeakKeyDictionary()


def _lo_debug_info(jaxpr: Jaxpr) -> DebugInfo | None:
    debug = jaxpr.debug_info
    if debug is None:
        return None
    names = debug.arg_names
    if names is None or len(names) != len(jaxpr.invars):
        return DebugInfo(debug.traced_for, debug.func_src_info, None, debug.result_paths)
    return DebugInfo(
        debug.traced_for,
        debug.func_src_info,
        expand_per_value(names, jaxpr.in_avals),
        debug.result_paths,
    )


def to_lojax(jaxpr: Jaxpr) -> Jaxpr:
    """`jaxpr` (without constvars) over arrays only: hi inputs and outputs are split into their
    arrays (`lo_ty` order), hi primitives expanded. A jaxpr without hi parts is returned as it
    is. Memoized per jaxpr."""
    if jaxpr.constvars:
        raise ValueError("to_lojax takes a jaxpr without constvars (open it first)")
    if not is_high(jaxpr):
        return jaxpr
    known = _memo.get(jaxpr)
    if known is not None:
        return known
    in_avals = jaxpr.in_avals
    out_avals = jaxpr.out_avals

    def run(*lo_args: Any) -> list[Any]:
        outs = interpret(jaxpr, raise_values(in_avals, lo_args))
        return lower_values(out_avals, outs)

    closed = trace_to_jaxpr(run, lo_avals(in_avals), _lo_debug_info(jaxpr))
    if closed.consts:  # tracers of an enclosing trace cannot appear: the jaxpr is closed
        raise AssertionError("to_lojax: the lowered jaxpr captured values")
    _memo[jaxpr] = closed.jaxpr
    return closed.jaxpr


def to_lojax_closed(closed: ClosedJaxpr) -> ClosedJaxpr:
    """`to_lojax` of a closed jaxpr whose consts are arrays (they stay its consts)."""
    jaxpr = closed.jaxpr
    if not is_high(jaxpr):
        return closed
    if any(v.aval.is_high for v in jaxpr.constvars):
        raise NotImplementedError("to_lojax: a closed jaxpr with hi-typed consts")
    n = len(jaxpr.constvars)
    opened = jaxpr.replace(constvars=(), invars=(*jaxpr.constvars, *jaxpr.invars))
    lo = to_lojax(opened)
    lo = lo.replace(constvars=lo.invars[:n], invars=lo.invars[n:])
    return ClosedJaxpr(lo, closed.consts)


LojaxRule = Callable[[JaxprEqn, list[Any]], list[Any]]
"""`rule(eqn, operands) -> outputs`: operands and outputs are values of the equation's types
(hi ones as hi values made of tracers); the rule binds array primitives only."""

to_lojax_rules: RuleTable[LojaxRule] = RuleTable("to-lojax")


def interpret(jaxpr: Jaxpr, args: Sequence[Any], consts: Sequence[Any] = ()) -> list[Any]:
    """Evaluate `jaxpr` under the current trace, hi primitives by their `expand` and hi values
    as the Python objects their types raise; returns the outputs."""
    env: dict[Var, Any] = dict(zip(jaxpr.constvars, consts, strict=True))
    env.update(zip(jaxpr.invars, args, strict=True))

    def read(atom: Any) -> Any:
        return atom.val if isinstance(atom, Literal) else env[atom]

    for eqn in jaxpr.eqns:
        ins = [read(a) for a in eqn.invars]
        prim = eqn.primitive
        rule = to_lojax_rules.get(prim)
        if isinstance(prim, HiPrimitive):
            out = prim.to_lojax(*ins, **eqn.params)
            outs = list(out) if prim.multiple_results else [out]
        elif rule is not None and _eqn_is_high(eqn):
            outs = rule(eqn, ins)
        else:
            if _eqn_is_high(eqn):
                raise NotImplementedError(
                    f"to_lojax: no rule for '{eqn.primitive.name}' with hi-typed values"
                )
            out = prim.bind(*ins, **eqn.params)
            outs = out if prim.multiple_results else [out]
        env.update(zip(eqn.outvars, outs, strict=True))
    return [read(a) for a in jaxpr.outvars]


def _expand_hi_primitive(eqn: JaxprEqn, ins: list[Any]) -> list[Any]:
    from lamina_core.rules import value_impl_rules

    outs: list[Any] = value_impl_rules[call_hi_primitive_p](*ins, **eqn.params)
    return outs


to_lojax_rules.set(call_hi_primitive_p, _expand_hi_primitive)


def _inline(eqn: JaxprEqn, ins: list[Any]) -> list[Any]:
    """A call whose callee uses hi types runs its callee in place (derivative rules of custom
    calls were used before lowering; lowering needs only the primal computation)."""
    key = "call_jaxpr" if "call_jaxpr" in eqn.params else "jaxpr"
    callee = eqn.params[key]
    if isinstance(callee, ClosedJaxpr):
        return interpret(callee.jaxpr, ins, callee.consts)
    return interpret(callee, ins)


for _call in (closed_call_p, remat_p, custom_jvp_call_p, custom_vjp_call_p):
    to_lojax_rules.set(_call, _inline)


def _lower_jit(eqn: JaxprEqn, ins: list[Any]) -> list[Any]:
    params = eqn.params
    callee: ClosedJaxpr = params["jaxpr"]
    in_avals, out_avals = callee.in_avals, callee.out_avals
    lo_callee = to_lojax_closed(callee)
    new = dict(params, jaxpr=lo_callee)
    for name in ("in_shardings", "in_layouts", "donated_invars"):
        if name in params:
            new[name] = expand_per_value(params[name], in_avals)
    for name in ("out_shardings", "out_layouts"):
        if name in params:
            new[name] = expand_per_value(params[name], out_avals)
    outs = jit_p.bind(*lower_values(in_avals, ins), **new)
    return raise_values(out_avals, outs)


to_lojax_rules.set(jit_p, _lower_jit)


def _lower_scan(eqn: JaxprEqn, ins: list[Any]) -> list[Any]:
    params = eqn.params
    body: ClosedJaxpr = params["jaxpr"]
    n_consts, n_carry = params["num_consts"], params["num_carry"]
    length = params["length"]
    op_avals = [a.aval for a in eqn.invars]
    out_avals = [v.aval for v in eqn.outvars]
    _check_stacking(op_avals[n_consts + n_carry :], body.in_avals[n_consts + n_carry :], length)
    lo_body = to_lojax_closed(body)
    counts = _counts(body.in_avals)
    linear = params.get("linear")
    new = dict(
        params,
        jaxpr=lo_body,
        num_consts=sum(counts[:n_consts]),
        num_carry=sum(counts[n_consts : n_consts + n_carry]),
    )
    if linear is not None:
        new["linear"] = expand_per_value(linear, body.in_avals)
    outs = scan_p.bind(*lower_values(op_avals, ins), **new)
    return raise_values(out_avals, outs)


def _check_stacking(stacked: Sequence[Any], elements: Sequence[AbstractValue], length: int) -> None:
    """A hi value scanned over must lower to its elements' arrays, each with a leading axis
    of `length` (what slicing and stacking the arrays one by one means)."""
    for whole, elt in zip(stacked, elements, strict=True):
        if not elt.is_high:
            continue
        parts, elt_parts = whole.lo_ty(), elt.lo_ty()
        if len(parts) != len(elt_parts) or any(
            p != e.inc_rank(length, 0) for p, e in zip(parts, elt_parts, strict=True)
        ):
            raise TypeError(
                f"to_lojax: scanning over {whole.str_short()} needs its arrays to be those of "
                f"{elt.str_short()} stacked along a leading axis of {length}; its lo_ty is "
                f"{[p.str_short() for p in parts]}, its elements' "
                f"{[p.str_short() for p in elt_parts]}"
            )


to_lojax_rules.set(scan_p, _lower_scan)


def _lower_while(eqn: JaxprEqn, ins: list[Any]) -> list[Any]:
    params = eqn.params
    cond: ClosedJaxpr = params["cond_jaxpr"]
    body: ClosedJaxpr = params["body_jaxpr"]
    nc, nb = params["cond_nconsts"], params["body_nconsts"]
    op_avals = [a.aval for a in eqn.invars]
    out_avals = [v.aval for v in eqn.outvars]
    outs = while_p.bind(
        *lower_values(op_avals, ins),
        cond_jaxpr=to_lojax_closed(cond),
        body_jaxpr=to_lojax_closed(body),
        cond_nconsts=sum(_counts(op_avals[:nc])),
        body_nconsts=sum(_counts(op_avals[nc : nc + nb])),
    )
    return raise_values(out_avals, outs)


to_lojax_rules.set(while_p, _lower_while)


def _lower_cond(eqn: JaxprEqn, ins: list[Any]) -> list[Any]:
    branches: tuple[ClosedJaxpr, ...] = eqn.params["branches"]
    op_avals = [a.aval for a in eqn.invars]
    out_avals = [v.aval for v in eqn.outvars]
    outs = cond_p.bind(
        *lower_values(op_avals, ins),
        **dict(eqn.params, branches=tuple(to_lojax_closed(b) for b in branches)),
    )
    return raise_values(out_avals, outs)


to_lojax_rules.set(cond_p, _lower_cond)


def _evaluate_lowered(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """The reference evaluator's application of `prim` to hi-typed values (or making them):
    its one-equation jaxpr lowered to arrays, evaluated, and its results raised."""
    from lamina_core.evaluate import eval_jaxpr
    from lamina_core.values import typeof

    in_avals = [typeof(x) for x in args]

    def one(*xs: Any) -> list[Any]:
        out = prim.bind(*xs, **params)
        return list(out) if prim.multiple_results else [out]

    jaxpr = trace_to_jaxpr(one, in_avals).jaxpr
    outs = eval_jaxpr(to_lojax(jaxpr), (), *lower_values(in_avals, args))
    results = raise_values(jaxpr.out_avals, outs)
    return results if prim.multiple_results else results[0]


install_high_impl(_evaluate_lowered)

__all__ = [
    "HiSignature",
    "interpret",
    "is_high",
    "lower_values",
    "raise_values",
    "to_lojax",
    "to_lojax_closed",
    "to_lojax_rules",
]
