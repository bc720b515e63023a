"""The to-lojax pass: a jaxpr with hi types and hi primitives becomes a jaxpr of arrays only.

Every hi-typed input becomes its arrays (`lo_ty`, in order) and every hi-typed output too. The
pass re-traces the jaxpr: a hi input's arrays are raised into a hi value (`raise_val`) whose
components are tracers, a hi primitive runs its `expand` on such values, and an equation of
arrays only is bound again as it is. Primitives holding jaxprs (`jit`, `scan`, `while`,
`cond`, `shard_map`, calls) have rules in `to_lojax_rules`, read off their `call_layouts`:
each stays one equation holding lowered jaxprs, each hi operand split into its arrays (a
custom-derivative call becomes a `closed_call`, as JAX's). Primitives of upper layers whose
meaning on hi values is their rule on values (Refs of hi values) register `expand_on_values`.
The runtime runs this pass first, so lamina-mlir lowers only arrays.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lamina_core.checkpoint import remat_p
from lamina_core.custom_derivatives import custom_jvp_call_p, custom_vjp_call_p
from lamina_core.interpreters import trace_to_jaxpr
from lamina_core.ir import (
    AbstractValue,
    Atom,
    ClosedJaxpr,
    DebugInfo,
    Jaxpr,
    JaxprEqn,
    Literal,
    Primitive,
    RuleTable,
    Var,
    jaxprs_in_params,
    value_impl_rules,
)
from lamina_core.lax import cond_p, scan_p, while_p
from lamina_core.sharding import shard_map_p
from lamina_core.trace import canonical_value, eval_jaxpr, install_high_impl, typeof
from lamina_core.transforms import closed_call_p, jit_p
from lamina_hijax._calls import call_layouts, map_callee
from lamina_hijax._mutable import lower_mutable, makes_mutable, takes_mutable
from lamina_hijax._primitives import HiPrimitive, hi_primitives
from lamina_hijax._types import lo_avals

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
        or any(a.aval.is_high for a in eqn.invars)  # e.g. writing a hi value to a Ref
        or any(is_high(j) for j in jaxprs_in_params(eqn.params))
    )


# --- values across the boundary ---------------------------------------------------------------


def lower_values(avals: Sequence[AbstractValue], values: Sequence[Any]) -> list[Any]:
    """`values` (of types `avals`) as the values of their types' `lo_ty` (`lower_val`)."""
    out: list[Any] = []
    for aval, x in zip(avals, values, strict=True):
        if not aval.is_high:
            out.append(x)
            continue
        lo = list(aval.lower_val(x))
        expected = aval.lo_ty()
        if len(lo) != len(expected):
            raise ValueError(
                f"{type(aval).__name__}.lower_val gave {len(lo)} values for a value of type "
                f"{aval.str_short()}, whose lo_ty has {len(expected)}"
            )
        out.extend(lo)
    return out


def raise_values(avals: Sequence[AbstractValue], lo_values: Sequence[Any]) -> list[Any]:
    """The values of types `avals` made of `lo_values` (`raise_val` of their `lo_ty`'s)."""
    out: list[Any] = []
    it = iter(lo_values)
    for aval in avals:
        if aval.is_high:
            out.append(aval.raise_val(*[next(it) for _ in aval.lo_ty()]))
        else:
            out.append(next(it))
    if next(it, None) is not None:
        raise ValueError("raise_values: more values than the types take")
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

Parts = list[Atom]
"""One value of the hi jaxpr as atoms of the lo jaxpr: one atom for an array, one per
component (`lo_ty` order) for a hi value."""


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
    is. Memoized per jaxpr.

    The pass rewrites equations rather than tracing the program again: an equation of arrays
    is kept as it is (the same object), a hi primitive is replaced by the equations of its
    expansion (traced once per primitive and input types, then copied with fresh variables),
    and primitives holding jaxprs by their `to_lojax_rules` rule.
    """
    if jaxpr.constvars:
        raise ValueError("to_lojax takes a jaxpr without constvars (open it first)")
    if not is_high(jaxpr):
        return jaxpr
    known = _memo.get(jaxpr)
    if known is not None:
        return known
    if makes_mutable(jaxpr) and not takes_mutable(jaxpr):
        # Boxes made and used inside: the program run once on Python boxes of its arrays.
        lowered = to_lojax(lower_mutable(ClosedJaxpr(jaxpr, []))[0].jaxpr)
        _memo[jaxpr] = lowered
        return lowered
    invars: list[Var] = []
    env: dict[Var, Parts] = {}
    for v in jaxpr.invars:
        parts = [Var(a) for a in v.aval.lo_ty()] if v.aval.is_high else [v]
        env[v] = parts  # type: ignore[assignment]  # Vars are atoms
        invars.extend(parts)
    eqns: list[JaxprEqn] = []
    rewrite_into(eqns, jaxpr.eqns, env)
    outvars = [a for atom in jaxpr.outvars for a in _parts(env, atom)]
    lowered = Jaxpr((), invars, outvars, eqns, jaxpr.effects, _lo_debug_info(jaxpr))
    _memo[jaxpr] = lowered
    return lowered


def _parts(env: dict[Var, Parts], atom: Atom) -> Parts:
    if isinstance(atom, Literal):
        if not atom.aval.is_high:
            return [atom]
        return [Literal(*canonical_value(x)) for x in lower_values([atom.aval], [atom.val])]
    if atom.aval.is_high:
        return env[atom]
    return env.get(atom, [atom])  # an array variable stands for itself


def rewrite_into(out: list[JaxprEqn], eqns: Sequence[JaxprEqn], env: dict[Var, Parts]) -> None:
    """Append the lojax equations of `eqns` to `out`; `env` maps each hi variable (and each
    renamed array variable) to its parts, and is extended with the equations' results."""
    for eqn in eqns:
        if not _eqn_is_high(eqn):
            if any(isinstance(a, Var) and a in env for a in eqn.invars):
                eqn = eqn.replace(invars=tuple(_parts(env, a)[0] for a in eqn.invars))
            out.append(eqn)
            continue
        in_parts = [_parts(env, a) for a in eqn.invars]
        prim = eqn.primitive
        rule = expand_on_values if prim in hi_primitives else to_lojax_rules.get(prim)
        if rule is None:
            raise NotImplementedError(f"to_lojax: no rule for '{prim.name}' with hi-typed values")
        env.update(zip(eqn.outvars, rule(out, eqn, in_parts), strict=True))


def expand_on_values(out: list[JaxprEqn], eqn: JaxprEqn, in_parts: list[Parts]) -> list[Parts]:
    """The to-lojax rule of a primitive whose meaning on hi values is its rule on values
    (`value_impl_rules`; a hi primitive's `expand`): that rule traced on hi values made of the
    operands' parts, and its equations appended."""
    outs = _inline(out, _expansion(eqn), [a for p in in_parts for a in p])
    return _split(outs, [v.aval for v in eqn.outvars])


def _split(atoms: Sequence[Atom], avals: Sequence[AbstractValue]) -> list[Parts]:
    it = iter(atoms)
    return [[next(it) for _ in range(n)] for n in _counts(avals)]


def _inline(out: list[JaxprEqn], callee: Jaxpr, args: Sequence[Atom]) -> list[Atom]:
    """Append `callee`'s equations to `out`, reading `args` for its inputs, with fresh
    variables (it may be inlined many times); returns what its outputs became."""
    sub: dict[Var, Atom] = dict(zip(callee.invars, args, strict=True))
    for eqn in callee.eqns:
        outvars = tuple(type(v)(v.aval) for v in eqn.outvars)  # a DropVar stays one
        invars = tuple(sub.get(a, a) if isinstance(a, Var) else a for a in eqn.invars)
        sub.update(zip(eqn.outvars, outvars, strict=True))
        out.append(eqn.replace(invars=invars, outvars=outvars))
    return [sub.get(a, a) if isinstance(a, Var) else a for a in callee.outvars]


_expansions: dict[tuple[Any, ...], Jaxpr] = {}


def _expansion(eqn: JaxprEqn) -> Jaxpr:
    """The lojax jaxpr of one hi-primitive application, traced once per primitive, params and
    input types (equal primitives of different types expand differently)."""
    prim = eqn.primitive
    in_avals = tuple(a.aval for a in eqn.invars)
    out_avals = tuple(v.aval for v in eqn.outvars)
    try:
        key: tuple[Any, ...] | None = (prim, tuple(eqn.params.items()), in_avals, out_avals)
        known = _expansions.get(key)  # type: ignore[arg-type]
    except TypeError:  # unhashable params: traced every time
        key, known = None, None
    if known is not None:
        return known

    def expand(*lo: Any) -> list[Any]:
        args = raise_values(in_avals, lo)
        meaning = prim.to_lojax if isinstance(prim, HiPrimitive) else value_impl_rules[prim]
        result = meaning(*args, **eqn.params)
        return lower_values(out_avals, list(result) if prim.multiple_results else [result])

    closed = trace_to_jaxpr(expand, lo_avals(in_avals))
    if closed.consts:
        raise ValueError(
            f"the expansion of {eqn.params.get('_prim', prim)} closes over traced values"
        )
    expansion = to_lojax(closed.jaxpr)  # an expansion may use other hi primitives
    if key is not None:
        if len(_expansions) > 4096:
            _expansions.clear()
        _expansions[key] = expansion
    return expansion


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


LojaxRule = Callable[[list[JaxprEqn], JaxprEqn, list[Parts]], list[Parts]]
"""`rule(out, eqn, in_parts) -> out_parts`: append the lojax equations of `eqn` (a primitive
holding jaxprs with hi parts) to `out`, given each operand's parts; return each result's."""

to_lojax_rules: RuleTable[LojaxRule] = RuleTable("to-lojax")


def _fresh_outvars(eqn: JaxprEqn) -> tuple[list[Var], list[Parts]]:
    """New binders for `eqn`'s results, a hi result split into its components."""
    flat: list[Var] = []
    parts: list[Parts] = []
    for v in eqn.outvars:
        if v.aval.is_high:
            new = [type(v)(a) for a in v.aval.lo_ty()]
            flat.extend(new)
            parts.append(new)  # type: ignore[arg-type]  # Vars are atoms
        else:
            flat.append(v)
            parts.append([v])
    return flat, parts


def _rebind(
    out: list[JaxprEqn], eqn: JaxprEqn, in_parts: list[Parts], params: dict[str, Any]
) -> list[Parts]:
    outvars, parts = _fresh_outvars(eqn)
    invars = tuple(a for p in in_parts for a in p)
    out.append(eqn.replace(invars=invars, outvars=tuple(outvars), params=params))
    return parts


def _call_of_lowered(out: list[JaxprEqn], eqn: JaxprEqn, in_parts: list[Parts]) -> list[Parts]:
    """A custom-derivative call whose callee uses hi types becomes a `closed_call` of the
    lowered callee, as JAX's: its derivative rules were used before lowering, which needs only
    the primal computation."""
    callee = eqn.params[call_layouts[eqn.primitive].callees[0].param]
    if not isinstance(callee, ClosedJaxpr):
        callee = ClosedJaxpr(callee, [])
    params = {"call_jaxpr": to_lojax_closed(callee)}
    return _rebind(out, eqn.replace(primitive=closed_call_p), in_parts, params)


for _call in (custom_jvp_call_p, custom_vjp_call_p):
    to_lojax_rules.set(_call, _call_of_lowered)


PerValue = Callable[[Sequence[Any], Sequence[AbstractValue]], tuple[Any, ...]]
"""`expand(entries, avals)`: a per-value param's entries (one per value of types `avals`)
given one per array."""


def _lowered_call(
    check: Callable[[JaxprEqn], None] | None = None, expand: PerValue = expand_per_value
) -> LojaxRule:
    """The rule of a call that stays a call (a compiled function, a loop, a branch, a manual
    region): its held jaxprs lowered, its count params counting arrays, and its per-value
    params given per array by `expand`; `check` sees the equation first."""

    def rule(out: list[JaxprEqn], eqn: JaxprEqn, in_parts: list[Parts]) -> list[Parts]:
        if check is not None:
            check(eqn)
        layout = call_layouts[eqn.primitive]
        old = eqn.params
        params = dict(old)
        for callee in layout.callees:
            params[callee.param] = map_callee(old[callee.param], _lower_callee)
        groups = layout.split(old, in_parts)
        params.update(layout.counts([sum(len(p) for p in group) for group in groups]))
        if layout.per_operand or layout.per_result:
            held = old[layout.callees[0].param]
            for name in layout.per_operand:
                if old.get(name) is not None:
                    params[name] = expand(old[name], held.in_avals)
            for name in layout.per_result:
                if old.get(name) is not None:
                    params[name] = expand(old[name], held.out_avals)
        return _rebind(out, eqn, in_parts, params)

    return rule


def _lower_callee(jaxpr: Jaxpr | ClosedJaxpr) -> Jaxpr | ClosedJaxpr:
    return to_lojax_closed(jaxpr) if isinstance(jaxpr, ClosedJaxpr) else to_lojax(jaxpr)


def _check_stacking(eqn: JaxprEqn) -> None:
    """A hi value a scan slices must lower to its elements' arrays, each with a leading axis
    of the scan's length (what slicing and stacking the arrays one by one means)."""
    params = eqn.params
    n_head, length = params["num_consts"] + params["num_carry"], params["length"]
    elements = params["jaxpr"].in_avals[n_head:]
    for whole, elt in zip((a.aval for a in eqn.invars[n_head:]), elements, strict=True):
        if not elt.is_high:
            continue
        parts, elt_parts = whole.lo_ty(), elt.lo_ty()
        if len(parts) != len(elt_parts) or any(
            p != e.inc_rank(length, 0) for p, e in zip(parts, elt_parts, strict=True)
        ):
            raise TypeError(
                f"to_lojax: scanning over {whole.str_short(True)} needs its arrays to be those of "
                f"{elt.str_short(True)} stacked along a leading axis of {length}; its lo_ty is "
                f"{[p.str_short(True) for p in parts]}, its elements' "
                f"{[p.str_short(True) for p in elt_parts]}"
            )


def _lo_specs(specs: Sequence[Any], avals: Sequence[AbstractValue]) -> tuple[Any, ...]:
    """One partition spec per array: a hi type's spec gives one per component (`to_lo`)."""
    out: list[Any] = []
    for spec, aval in zip(specs, avals, strict=True):
        if not aval.is_high:
            out.append(spec)
            continue
        lo = list(spec.to_lo())
        if len(lo) != len(aval.lo_ty()):
            raise ValueError(
                f"shard_map: the spec {spec} of a value of type {aval.str_short(True)} gives "
                f"{len(lo)} partition specs (to_lo) for its {len(aval.lo_ty())} arrays"
            )
        out.extend(lo)
    return tuple(out)


for _call in (jit_p, closed_call_p, remat_p, while_p, cond_p):
    to_lojax_rules.set(_call, _lowered_call())
to_lojax_rules.set(scan_p, _lowered_call(check=_check_stacking))
to_lojax_rules.set(shard_map_p, _lowered_call(expand=_lo_specs))


def _evaluate_lowered(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """The reference evaluator's application of `prim` to hi-typed values (or making them):
    its one-equation jaxpr lowered to arrays, evaluated, and its results raised."""
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
    "expand_on_values",
    "is_high",
    "lower_values",
    "raise_values",
    "rewrite_into",
    "to_lojax",
    "to_lojax_closed",
    "to_lojax_rules",
]
