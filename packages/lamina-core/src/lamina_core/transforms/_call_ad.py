"""Differentiation of the `jit` call primitive: jvp, linearization and transposition.

Each rule transforms the callee jaxpr and binds `jit` again, so `grad(jit(f))` keeps its jit
boundaries as JAX does: a known `jit` computing primal outputs and residuals, then the
transposed tangent `jit` taking `[*residuals, *cotangents]`. Transformed callees are cached
per callee object, so a function called twice prints its transformed body once (`let`).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lamina_core.interpreters import (
    DceRule,
    JVPTrace,
    JVPTracer,
    LinearizeTrace,
    LinearizeTracer,
    SplitTrace,
    TangentTrace,
    UndefinedPrimal,
    Zero,
    backward_pass,
    cotangents_per_arg,
    dce_jaxpr,
    dce_rules,
    instantiate_zeros,
    is_float0,
    is_undefined,
    jvp_rules,
    linearization_rules,
    linearizing_for_vjp,
    partial_eval_jaxpr_nounits,
    partial_eval_rules,
    prune_residuals,
    trace_to_jaxpr,
    transpose_rules,
    zero_of,
)
from lamina_core.ir import AbstractValue, ClosedJaxpr, JaxprEqn, Var, reset_name_stack
from lamina_core.trace import current_trace, eval_jaxpr, set_current_trace, typeof
from lamina_core.transforms._call import UNSPECIFIED, closed_call_p, jit_p, jit_params

_Cache = weakref.WeakKeyDictionary[ClosedJaxpr, dict[Any, Any]]


def _cached(cache: _Cache, closed: ClosedJaxpr, key: Any, make: Callable[[], Any]) -> Any:
    entries = cache.setdefault(closed, {})
    if key not in entries:
        entries[key] = make()
    return entries[key]


def _rebind_params(params: Mapping[str, Any], jaxpr: ClosedJaxpr) -> dict[str, Any]:
    """The params of a `jit` over a transformed callee: same name and options, new arity."""
    new = jit_params(
        jaxpr, params["name"], keep_unused=params["keep_unused"], inline=params["inline"]
    )
    new["ctx_mesh"] = params["ctx_mesh"]
    new["compiler_options_kvs"] = params["compiler_options_kvs"]
    return new


# --- forward mode ------------------------------------------------------------------------

_jvp_cache: _Cache = weakref.WeakKeyDictionary()


def jvp_jaxpr(
    closed: ClosedJaxpr,
    nonzeros: tuple[bool, ...],
    instantiate: tuple[bool, ...] | None = None,
) -> tuple[ClosedJaxpr, list[bool]]:
    """`[*primals, *nonzero tangents] -> [*outs, *nonzero tangent outs]`, and which are nonzero.

    An output flagged in `instantiate` gets a tangent even when it is a symbolic zero (an
    array of zeros), as loops need for carries whose tangent is nonzero on a later trip.
    """

    def make() -> tuple[ClosedJaxpr, list[bool]]:
        out_nz: list[bool] = []
        n = len(closed.in_avals)

        def fun(*args: Any) -> list[Any]:
            primals, nz_tangents = args[:n], iter(args[n:])
            trace = JVPTrace(current_trace())
            ins = [
                JVPTracer(trace, p, next(nz_tangents)) if nz else p
                for p, nz in zip(primals, nonzeros, strict=True)
            ]
            with set_current_trace(trace):
                outs = eval_jaxpr(closed, (), *ins)
            pairs = [trace.pair(o) for o in outs]
            if instantiate is not None:
                pairs = [
                    (p, instantiate_zeros(t) if inst else t)
                    for (p, t), inst in zip(pairs, instantiate, strict=True)
                ]
            out_nz.extend(type(t) is not Zero for _, t in pairs)
            return [p for p, _ in pairs] + [t for _, t in pairs if type(t) is not Zero]

        in_avals = closed.in_aval_qdds
        tangent_avals = [
            a.to_tangent_aval() for a, nz in zip(in_avals, nonzeros, strict=True) if nz
        ]
        jaxpr = trace_to_jaxpr(fun, [*in_avals, *tangent_avals], closed.jaxpr.debug_info)
        return jaxpr, out_nz

    key = nonzeros if instantiate is None else (nonzeros, instantiate)
    result: tuple[ClosedJaxpr, list[bool]] = _cached(_jvp_cache, closed, key, make)
    return result


def split_jvp_outs(outs: Sequence[Any], out_nz: Sequence[bool]) -> tuple[Sequence[Any], list[Any]]:
    """The outputs `[*outs, *nonzero tangent outs]` of a call of `jvp_jaxpr`'s jaxpr as the
    primal outputs and one tangent for each (a `Zero` where `out_nz` says there is none)."""
    n = len(out_nz)
    primals_out, nz_out = outs[:n], iter(outs[n:])
    return primals_out, [
        next(nz_out) if nz else zero_of(p) for p, nz in zip(primals_out, out_nz, strict=True)
    ]


def _jit_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
    closed: ClosedJaxpr = params["jaxpr"]
    nonzeros = tuple(type(t) is not Zero and not is_float0(typeof(t)) for t in tangents)
    jaxpr, out_nz = jvp_jaxpr(closed, nonzeros)
    nz_tangents = [t for t, nz in zip(tangents, nonzeros, strict=True) if nz]
    outs = jit_p.bind(*primals, *nz_tangents, **_rebind_params(params, jaxpr))
    return split_jvp_outs(outs, out_nz)


jvp_rules.set(jit_p, _jit_jvp)


def _closed_call_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, call_jaxpr: ClosedJaxpr
) -> tuple[Any, Any]:
    nonzeros = tuple(type(t) is not Zero and not is_float0(typeof(t)) for t in tangents)
    jaxpr, out_nz = jvp_jaxpr(call_jaxpr, nonzeros)
    nz_tangents = [t for t, nz in zip(tangents, nonzeros, strict=True) if nz]
    outs = closed_call_p.bind(*primals, *nz_tangents, call_jaxpr=jaxpr)
    return split_jvp_outs(outs, out_nz)


jvp_rules.set(closed_call_p, _closed_call_jvp)

# --- linearization -----------------------------------------------------------------------


class LinearizedJaxpr:
    """A jaxpr split by linearization: the primal half, the tangent half, and residual plumbing.

    `primal`: `ins -> [*outs, *residuals not forwarded]`; `tangent`: `[*residuals, *nonzero
    tangents] -> nonzero tangent outs`. `residual_sources[i]` says where residual i comes from:
    `("in", k)` the k-th input, `("out", k)` the k-th output, `("res", k)` the k-th extra
    primal output.
    """

    __slots__ = ("out_nonzeros", "primal", "residual_sources", "tangent")

    def __init__(
        self,
        primal: ClosedJaxpr,
        tangent: ClosedJaxpr,
        out_nonzeros: list[bool],
        residual_sources: list[tuple[str, int]],
    ) -> None:
        self.primal = primal
        self.tangent = tangent
        self.out_nonzeros = out_nonzeros
        self.residual_sources = residual_sources


_linearize_cache: _Cache = weakref.WeakKeyDictionary()


def _linearize_body(
    closed: ClosedJaxpr,
    nonzeros: Sequence[bool],
    instantiate: Sequence[bool] | None,
    primals: Sequence[Any],
) -> tuple[list[Any], list[bool], ClosedJaxpr]:
    """Evaluate `closed` on `primals` under a linearize trace: the primal outputs, which have
    a nonzero tangent, and the tangent jaxpr closed over its residuals (first-use order)."""
    parent = current_trace()
    tangent_trace = TangentTrace(parent, closed.jaxpr.debug_info)
    # The body is linearized for what the caller's linearization is for (hi primitives'
    # rules differ: `vjp_fwd` for grad, `lin` for linearize).
    trace = LinearizeTrace(parent, tangent_trace, linearizing_for_vjp())
    tangent_args = [
        tangent_trace.new_arg(a.to_tangent_aval())
        for a, nz in zip(closed.in_avals, nonzeros, strict=True)
        if nz
    ]
    it = iter(tangent_args)
    ins = [
        LinearizeTracer(trace, p, next(it)) if nz else p
        for p, nz in zip(primals, nonzeros, strict=True)
    ]
    with set_current_trace(trace), reset_name_stack():
        outs = eval_jaxpr(closed, (), *ins)
        pairs = [trace.pair(o) for o in outs]
        if instantiate is not None:
            pairs = [
                (p, instantiate_zeros(t) if inst else t)
                for (p, t), inst in zip(pairs, instantiate, strict=True)
            ]
    out_nz = [type(t) is not Zero for _, t in pairs]
    jaxpr, consts = tangent_trace.finish(
        [t.jaxpr_var for t in tangent_args], [t for _, t in pairs if type(t) is not Zero]
    )
    return [p for p, _ in pairs], out_nz, prune_residuals(jaxpr, consts)


def _opened(tangent: ClosedJaxpr) -> ClosedJaxpr:
    """The tangent jaxpr taking its residuals as leading inputs."""
    j = tangent.jaxpr
    return ClosedJaxpr(j.replace(constvars=(), invars=(*j.constvars, *j.invars)), [])


def linearize_jaxpr(closed: ClosedJaxpr, nonzeros: tuple[bool, ...]) -> LinearizedJaxpr:
    """Split `closed` into its primal and tangent halves for inputs with `nonzeros` tangents."""

    def make() -> LinearizedJaxpr:
        box: list[Any] = []

        def fun(*primals: Any) -> list[Any]:
            outs, out_nz, tangent = _linearize_body(closed, nonzeros, None, primals)
            box.extend([tangent, out_nz])
            return [*outs, *tangent.consts]

        staged = trace_to_jaxpr(fun, closed.in_aval_qdds, closed.jaxpr.debug_info)
        tangent, out_nz = box
        primal, sources = _forward_residuals(staged, len(closed.out_avals))
        return LinearizedJaxpr(primal, _opened(tangent), out_nz, sources)

    key = (nonzeros, linearizing_for_vjp())
    result: LinearizedJaxpr = _cached(_linearize_cache, closed, key, make)
    return result


class JaxprLinearization:
    """JAX's `linearize_jaxpr` result, as control-flow rules consume it.

    `primal`: `ins -> [*outs, *residuals not forwarded]`;
    `tangent`: `[*residuals, *nonzero tangents] -> nonzero tangent outs`; `in_fwd_res[i]`:
    the index in `[*closed.consts, *ins]` residual i forwards, or None if `primal` outputs it.
    """

    __slots__ = ("in_fwd_res", "num_res", "out_nonzeros", "primal", "tangent")

    def __init__(
        self,
        primal: ClosedJaxpr,
        tangent: ClosedJaxpr,
        out_nonzeros: list[bool],
        in_fwd_res: list[int | None],
    ) -> None:
        self.primal = primal
        self.tangent = tangent
        self.out_nonzeros = out_nonzeros
        self.in_fwd_res = in_fwd_res
        self.num_res = sum(f is None for f in in_fwd_res)


def linearize_jaxpr_forwarding(
    closed: ClosedJaxpr,
    nonzeros: tuple[bool, ...],
    instantiate: tuple[bool, ...],
    allow_fwds: tuple[bool, ...] | bool,
) -> JaxprLinearization:
    """Linearize `closed`: outputs flagged in `instantiate` get a tangent even if zero, and
    residuals that are inputs allowed by `allow_fwds` (one flag per const, then per input)
    are named, not returned."""
    n_consts = len(closed.consts)
    if isinstance(allow_fwds, bool):
        allow_fwds = (allow_fwds,) * (n_consts + len(closed.in_avals))

    def make() -> JaxprLinearization:
        box: list[Any] = []

        def fun(*primals: Any) -> list[Any]:
            outs, out_nz, tangent = _linearize_body(closed, nonzeros, instantiate, primals)
            sources = {
                id(x): i
                for i, (x, ok) in enumerate(
                    zip((*closed.consts, *primals), allow_fwds, strict=True)
                )
                if ok
            }
            fwds = [sources.get(id(c)) for c in tangent.consts]
            box.extend([tangent, out_nz, fwds])
            return [*outs, *(c for c, f in zip(tangent.consts, fwds, strict=True) if f is None)]

        staged = trace_to_jaxpr(fun, closed.in_aval_qdds, closed.jaxpr.debug_info)
        # As JAX's, both halves lose their dead equations (a nested cond's unread `empty2`s).
        primal = ClosedJaxpr(dce_jaxpr(staged.jaxpr)[0], staged.consts)
        tangent, out_nz, fwds = box
        return JaxprLinearization(primal, _opened(tangent), out_nz, fwds)

    key = ("fwd", nonzeros, instantiate, allow_fwds, linearizing_for_vjp())
    result: JaxprLinearization = _cached(_linearize_cache, closed, key, make)
    return result


def _forward_residuals(
    staged: ClosedJaxpr, n_out: int
) -> tuple[ClosedJaxpr, list[tuple[str, int]]]:
    """Drop residual outputs that are inputs or primal outputs; say where each comes from."""
    jaxpr = staged.jaxpr
    invars = {v: i for i, v in enumerate(jaxpr.invars)}
    outs = list(jaxpr.outvars[:n_out])
    sources: list[tuple[str, int]] = []
    kept: list[Any] = []
    for atom in jaxpr.outvars[n_out:]:
        if isinstance(atom, Var) and atom in invars:
            sources.append(("in", invars[atom]))
        elif isinstance(atom, Var) and atom in outs:
            sources.append(("out", outs.index(atom)))
        else:
            sources.append(("res", len(kept)))
            kept.append(atom)
    # As JAX, the primal half loses equations neither an output nor a residual needs.
    new, _ = dce_jaxpr(jaxpr.replace(outvars=(*outs, *kept)))
    return ClosedJaxpr(new, staged.consts), sources


_prune_cache: _Cache = weakref.WeakKeyDictionary()


def _output_forwards(
    primal: ClosedJaxpr, n_out: int, params: Mapping[str, Any]
) -> list[int | None]:
    """For each of the first `n_out` outputs of `primal`: the index of the input it is, if the
    call asks no sharding or layout of that output; else None."""
    invars = {v: i for i, v in enumerate(primal.jaxpr.invars)}
    return [
        invars.get(v) if isinstance(v, Var) and s is UNSPECIFIED and layout is None else None
        for v, s, layout in zip(
            primal.jaxpr.outvars[:n_out], params["out_shardings"], params["out_layouts"],
            strict=True,
        )
    ]  # fmt: skip


def _pruned_outputs(closed: ClosedJaxpr, keep: Sequence[bool]) -> ClosedJaxpr:
    outvars = tuple(v for v, k in zip(closed.jaxpr.outvars, keep, strict=True) if k)
    return ClosedJaxpr(closed.jaxpr.replace(outvars=outvars), closed.consts)


def _jit_linearize(nonzeros: Sequence[bool], *primals: Any, **params: Any) -> Any:
    closed: ClosedJaxpr = params["jaxpr"]
    nz = tuple(
        n and not is_float0(a.to_tangent_aval())
        for n, a in zip(nonzeros, closed.in_avals, strict=True)
    )
    lin = linearize_jaxpr(closed, nz)
    n_out = len(closed.out_avals)
    # As JAX's: a primal output that is an input of the callee (and asks for no placement) is
    # not returned by the primal call; the caller uses the input itself.
    fwds = _output_forwards(lin.primal, n_out, params)
    primal = lin.primal
    if any(f is not None for f in fwds):
        keep = (*(f is None for f in fwds), *(True,) * (len(primal.out_avals) - n_out))
        primal = _cached(_prune_cache, primal, keep, lambda: _pruned_outputs(lin.primal, keep))
    outs = jit_p.bind(*primals, **_rebind_params(params, primal))
    n_kept = sum(f is None for f in fwds)
    kept, extra = iter(outs[:n_kept]), outs[n_kept:]
    primals_out = [next(kept) if f is None else primals[f] for f in fwds]
    sources = {"in": primals, "out": primals_out, "res": extra}
    residuals = [sources[kind][k] for kind, k in lin.residual_sources]
    tangent_params = _rebind_params(params, lin.tangent)

    def linearized(res: Sequence[Any], *tangents: Any) -> list[Any]:
        nz_tangents = [t for t, n in zip(tangents, nz, strict=True) if n]
        nz_out = iter(jit_p.bind(*res, *nz_tangents, **tangent_params))
        return [
            next(nz_out) if n else zero_of(p)
            for p, n in zip(primals_out, lin.out_nonzeros, strict=True)
        ]

    return primals_out, lin.out_nonzeros, residuals, linearized


linearization_rules.set(jit_p, _jit_linearize)

# --- transposition -----------------------------------------------------------------------

_transpose_cache: _Cache = weakref.WeakKeyDictionary()


def transpose_jaxpr(
    closed: ClosedJaxpr,
    linear: tuple[bool, ...],
    known_avals: tuple[AbstractValue, ...],
    ct_avals: tuple[AbstractValue | None, ...],
    instantiate: tuple[bool, ...] | None = None,
) -> tuple[ClosedJaxpr, list[bool]]:
    """`[*known args, *nonzero cts] -> nonzero cts of the linear args`, and which are nonzero.

    `ct_avals[i]` is None where output i's cotangent is a symbolic zero; a linear arg flagged
    in `instantiate` (one flag per linear arg) gets an array of zeros rather than no output.
    """

    def make() -> tuple[ClosedJaxpr, list[bool]]:
        ct_nz: list[bool] = []
        n_known = len(known_avals)

        def fun(*args: Any) -> list[Any]:
            known, nz_cts = iter(args[:n_known]), iter(args[n_known:])
            full = [
                UndefinedPrimal(a) if lin else next(known)
                for a, lin in zip(closed.in_avals, linear, strict=True)
            ]
            cts = [
                next(nz_cts) if a is not None else Zero(o.to_tangent_aval())
                for a, o in zip(ct_avals, closed.out_avals, strict=True)
            ]
            in_cts = backward_pass(closed.jaxpr, closed.consts, full, cts)
            if instantiate is not None:
                in_cts = [
                    instantiate_zeros(c) if inst else c
                    for c, inst in zip(in_cts, instantiate, strict=True)
                ]
            ct_nz.extend(type(c) is not Zero for c in in_cts)
            return [c for c in in_cts if type(c) is not Zero]

        avals = [*known_avals, *[a for a in ct_avals if a is not None]]
        jaxpr = trace_to_jaxpr(fun, avals, closed.jaxpr.debug_info)
        return jaxpr, ct_nz

    key = (linear, known_avals, ct_avals, instantiate)
    result: tuple[ClosedJaxpr, list[bool]] = _cached(_transpose_cache, closed, key, make)
    return result


def _jit_transpose(cts: Sequence[Any], *args: Any, **params: Any) -> list[Any]:
    closed: ClosedJaxpr = params["jaxpr"]
    linear = tuple(is_undefined(a) for a in args)
    known = [a for a in args if not is_undefined(a)]
    nz_cts = [c for c in cts if type(c) is not Zero]
    ct_avals = tuple(None if type(c) is Zero else typeof(c) for c in cts)
    jaxpr, ct_nz = transpose_jaxpr(closed, linear, tuple(typeof(k) for k in known), ct_avals)
    outs = jit_p.bind(*known, *nz_cts, **_rebind_params(params, jaxpr))
    return cotangents_per_arg(args, ct_nz, outs)


transpose_rules.set(jit_p, _jit_transpose)


# --- partial evaluation (a jit met by a jvp rule during linearization) ---------------------

_partial_eval_cache: _Cache = weakref.WeakKeyDictionary()


class SplitJaxpr:
    """A callee split by partial evaluation into a known and an unknown `jit`, as JAX's
    `_pjit_partial_eval`: the known one returns `[known outs not forwarded, residuals not
    forwarded]`, the unknown one takes `[*unknown ins, *residuals]` (residuals last)."""

    __slots__ = ("known", "known_out_sources", "out_unknowns", "residual_sources", "unknown")

    def __init__(
        self,
        known: ClosedJaxpr,
        unknown: ClosedJaxpr,
        out_unknowns: list[bool],
        known_out_sources: list[tuple[str, int]],
        residual_sources: list[tuple[str, int]],
    ) -> None:
        self.known = known
        self.unknown = unknown
        self.out_unknowns = out_unknowns
        self.known_out_sources = known_out_sources
        self.residual_sources = residual_sources


def split_jaxpr(closed: ClosedJaxpr, unknowns: tuple[bool, ...]) -> SplitJaxpr:
    def make() -> SplitJaxpr:
        known, unknown, out_unknowns, res_avals = partial_eval_jaxpr_nounits(
            closed, unknowns, instantiate=False
        )
        jaxpr = known.jaxpr
        n_known_out = len(jaxpr.outvars) - len(res_avals)
        invars = {v: i for i, v in enumerate(jaxpr.invars)}
        kept: list[Any] = []

        def source(atom: Any) -> tuple[str, int]:
            if isinstance(atom, Var) and atom in invars:
                return ("in", invars[atom])
            kept.append(atom)
            return ("out", len(kept) - 1)

        out_sources = [source(a) for a in jaxpr.outvars[:n_known_out]]
        res_sources = [source(a) for a in jaxpr.outvars[n_known_out:]]
        known = ClosedJaxpr(jaxpr.replace(outvars=tuple(kept)), known.consts)
        n_res = len(res_avals)
        u = unknown.jaxpr
        moved = u.replace(invars=(*u.invars[n_res:], *u.invars[:n_res]))
        return SplitJaxpr(
            known, ClosedJaxpr(moved, unknown.consts), out_unknowns, out_sources, res_sources
        )

    result: SplitJaxpr = _cached(_partial_eval_cache, closed, unknowns, make)
    return result


def _jit_partial_eval(trace: SplitTrace, *args: Any, **params: Any) -> list[Any]:
    closed: ClosedJaxpr = params["jaxpr"]
    unknowns = tuple(trace.is_unknown(a) for a in args)
    split = split_jaxpr(closed, unknowns)
    known_args = [a for a, u in zip(args, unknowns, strict=True) if not u]
    known_outs = trace.bind_known(jit_p, known_args, _rebind_params(params, split.known))
    sources = {"in": known_args, "out": known_outs}
    known_vals = iter([sources[kind][k] for kind, k in split.known_out_sources])
    residuals = [sources[kind][k] for kind, k in split.residual_sources]
    unknown_args = [a for a, u in zip(args, unknowns, strict=True) if u]
    unknown_outs = iter(
        trace.bind_unknown(
            jit_p, [*unknown_args, *residuals], _rebind_params(params, split.unknown)
        )
    )
    return [next(unknown_outs) if u else next(known_vals) for u in split.out_unknowns]


partial_eval_rules.set(jit_p, _jit_partial_eval)


# --- dead-code elimination ---------------------------------------------------------------

_dce_cache: _Cache = weakref.WeakKeyDictionary()


def _call_dce(
    param: str, rebuild: Callable[[JaxprEqn, ClosedJaxpr, list[bool], list[bool]], dict[str, Any]]
) -> DceRule:
    """The DCE rule of a call primitive holding its callee in `param`: the callee keeps the
    outputs read and the inputs those need; `rebuild` gives the trimmed call's params."""

    def rule(used_outputs: list[bool], eqn: JaxprEqn) -> tuple[list[bool], JaxprEqn | None]:
        if not any(used_outputs) and not eqn.effects:
            return [False] * len(eqn.invars), None
        closed: ClosedJaxpr = eqn.params[param]

        def make() -> tuple[ClosedJaxpr, list[bool]]:
            jaxpr, used_inputs = dce_jaxpr(closed.jaxpr, used_outputs, prune_invars=True)
            return ClosedJaxpr(jaxpr, closed.consts), used_inputs

        trimmed, used_inputs = _cached(_dce_cache, closed, tuple(used_outputs), make)
        if trimmed.jaxpr is closed.jaxpr:
            return used_inputs, eqn
        new = eqn.replace(
            invars=tuple(v for v, u in zip(eqn.invars, used_inputs, strict=True) if u),
            outvars=tuple(v for v, u in zip(eqn.outvars, used_outputs, strict=True) if u),
            params=rebuild(eqn, trimmed, used_inputs, list(used_outputs)),
            effects=trimmed.effects,
        )
        return used_inputs, new

    return rule


def _jit_dce_params(
    eqn: JaxprEqn, trimmed: ClosedJaxpr, used_inputs: list[bool], used_outputs: list[bool]
) -> dict[str, Any]:
    params = _rebind_params(eqn.params, trimmed)
    old = eqn.params
    params["donated_invars"] = tuple(_kept(old["donated_invars"], used_inputs))
    # The shardings given for what stays stay (other rebinds change arity or ranks: they drop).
    params["in_shardings"] = tuple(_kept(old["in_shardings"], used_inputs))
    params["out_shardings"] = tuple(_kept(old["out_shardings"], used_outputs))
    return params


def _kept(values: Sequence[Any], used: Sequence[bool]) -> list[Any]:
    return [v for v, u in zip(values, used, strict=True) if u]


dce_rules.set(jit_p, _call_dce("jaxpr", _jit_dce_params))
dce_rules.set(
    closed_call_p, _call_dce("call_jaxpr", lambda _, trimmed, *__: {"call_jaxpr": trimmed})
)

__all__ = [
    "JaxprLinearization",
    "LinearizedJaxpr",
    "SplitJaxpr",
    "jvp_jaxpr",
    "linearize_jaxpr",
    "linearize_jaxpr_forwarding",
    "split_jaxpr",
    "split_jvp_outs",
    "transpose_jaxpr",
]
