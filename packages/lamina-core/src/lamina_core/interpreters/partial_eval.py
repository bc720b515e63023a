"""Partial evaluation: known values computed now, unknown ones staged.

`SplitTrace` is the partial evaluator that linearization runs jvp rules under: an operation
whose operands are all known (primal-side values) is applied by the parent trace; one that
reads an unknown value (a tracer of the tangent trace) is staged into the tangent trace,
its known operands becoming residuals. Primitives that contain jaxprs (`jit`, `remat2`) split
themselves instead, with a rule from `partial_eval_rules`: a known call on the parent and an
unknown call staged, as JAX's `_pjit_partial_eval` and `remat_partial_eval` do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

import numpy as np

from lamina_core.interpreters.dce import dce_jaxpr
from lamina_core.interpreters.staging import StagingTrace, StagingTracer, trace_to_jaxpr
from lamina_core.ir import (
    AbstractValue,
    Atom,
    ClosedJaxpr,
    DebugInfo,
    Effect,
    Jaxpr,
    JaxprEqn,
    Literal,
    Primitive,
    RuleTable,
    TypedComplex,
    TypedFloat,
    TypedInt,
    Var,
)
from lamina_core.trace import (
    Trace,
    Tracer,
    bind_with_trace,
    canonical_value,
    current_trace,
    eval_jaxpr,
    set_current_trace,
    typeof,
)

PartialEvalRule: TypeAlias = Callable[..., Any]
"""`rule(trace: SplitTrace, *args, **params) -> out(s)`, called when some args are unknown.

Known outputs are values of the parent trace, unknown ones tracers of `trace.tangent_trace`;
`trace.bind_known` and `trace.bind_unknown` apply primitives on either side.
"""

partial_eval_rules: RuleTable[PartialEvalRule] = RuleTable("partial evaluation")

known_partial_eval_rules: RuleTable[PartialEvalRule] = RuleTable("partial evaluation (all known)")
"""Rules also called when every operand is known. JAX's partial evaluator calls a primitive's
custom rule whatever its operands; most of those rules then just apply the primitive, as
`SplitTrace` does without a rule, but `scan`'s hoists the loop-invariant work out of the loop."""

_LITERAL_SCALARS = (bool, int, float, complex, TypedInt, TypedFloat, TypedComplex)


class TangentTrace(StagingTrace):
    """Stages the tangent (linear) half of a linearization.

    Unlike plain staging, arrays it does not own become constvars (residuals) rather than
    literals, so residuals computed eagerly stay device values; scalars are still literals.
    """

    __slots__ = ("_computed", "_residual_ids")

    def __init__(self, parent: Trace | None, debug_info: DebugInfo | None = None) -> None:
        super().__init__(parent, debug_info)
        self._residual_ids: dict[int, Var] = {}
        self._computed: dict[int, Any] = {}

    def note_computed(self, value: Any) -> None:
        """`value` was computed by a rule (an instantiated zero): a residual even if scalar."""
        self._computed[id(value)] = value

    def to_atom(self, x: Any) -> Atom:
        if isinstance(x, StagingTracer) and x._trace is self:
            return x.jaxpr_var
        if isinstance(x, Tracer):
            return self._capture(x)
        literal = type(x) in _LITERAL_SCALARS or (
            isinstance(x, np.generic | np.ndarray) and x.ndim == 0
        )
        if literal and self._computed.get(id(x)) is not x:
            val, aval = canonical_value(x)
            return Literal(val, aval)
        var = self._residual_ids.get(id(x))
        if var is None:
            var = self._residual_ids[id(x)] = Var(typeof(x))
            self.constvars.append(var)
            self.consts.append(x)
        return var


def prune_residuals(jaxpr: Jaxpr, consts: Sequence[Any]) -> ClosedJaxpr:
    """`jaxpr` without dead equations, closed over the residuals it still reads."""
    opened = jaxpr.replace(constvars=(), invars=(*jaxpr.constvars, *jaxpr.invars))
    live, used = dce_jaxpr(opened)
    n = len(jaxpr.constvars)
    kept = [v for v, u in zip(jaxpr.constvars, used[:n], strict=True) if u]
    kept_consts = [c for c, u in zip(consts, used[:n], strict=True) if u]
    return ClosedJaxpr(live.replace(constvars=kept, invars=jaxpr.invars), kept_consts)


class SplitTrace(Trace):
    """Known work on the parent, work touching an unknown value staged. Identity intended."""

    __slots__ = ("named_absolutely", "tangent_trace")

    def __init__(self, parent: Trace, tangent_trace: StagingTrace) -> None:
        super().__init__(parent)
        self.tangent_trace = tangent_trace
        self.named_absolutely: list[JaxprEqn] = []
        """Equations staged with `absolute_names`: see `bind_unknown`."""

    def note_computed(self, value: Any) -> None:
        note = getattr(self.tangent_trace, "note_computed", None)
        if note is not None:
            note(value)

    def note_lifted(self, value: Any) -> None:
        """A constant a frontend function made without binding (JAX's `stage`, which lifts
        it into the parent trace here): a residual where unknown work reads it."""
        self.note_computed(value)

    def is_unknown(self, x: Any) -> bool:
        return isinstance(x, StagingTracer) and x._trace is self.tangent_trace

    def bind_known(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        parent = self.parent
        assert parent is not None
        return bind_with_trace(parent, prim, args, params)

    def bind_unknown(
        self,
        prim: Primitive,
        args: Sequence[Any],
        params: dict[str, Any],
        *,
        absolute_names: bool = False,
    ) -> Any:
        """Stage `prim`. A linearization names the equations it stages relative to the name
        stack open when it began; with `absolute_names` the equation keeps the whole stack
        below that, as JAX's rules that stage with `source_info_util.current()` (remat's)."""
        if not absolute_names:
            return bind_with_trace(self.tangent_trace, prim, args, params)
        staged = self.tangent_trace.eqns
        first = len(staged)
        out = bind_with_trace(self.tangent_trace, prim, args, params)
        self.named_absolutely.extend(staged[first:])
        return out

    def process_primitive(
        self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]
    ) -> Any:
        unknown = self.tangent_trace  # `is_unknown` inlined: asked of every operand
        if not any(isinstance(x, StagingTracer) and x._trace is unknown for x in args):
            known_rule = known_partial_eval_rules.get(prim)
            if known_rule is not None:
                return known_rule(self, *args, **params)
            return self.bind_known(prim, args, params)
        rule = partial_eval_rules.get(prim)
        if rule is not None:
            return rule(self, *args, **params)
        return self.bind_unknown(prim, args, params)


__all__ = [
    "PartialEvalRule",
    "SplitTrace",
    "TangentTrace",
    "known_partial_eval_rules",
    "partial_eval_jaxpr_nounits",
    "partial_eval_kept_effects",
    "partial_eval_rules",
    "prune_residuals",
    "residuals_in_jax_order",
]


def partial_eval_jaxpr_nounits(
    closed: ClosedJaxpr, unknowns: Sequence[bool], instantiate: bool | Sequence[bool]
) -> tuple[ClosedJaxpr, ClosedJaxpr, list[bool], list[AbstractValue]]:
    """Split `closed` by which inputs are unknown, as JAX's function of the same name.

    Returns `known: known ins -> [known outs, *residuals]`, `unknown: [*residuals, *unknown
    ins] -> unknown outs`, which outputs are unknown (or instantiated), and the residual types.
    Residuals are in order of first use by the unknown equations.
    """
    if isinstance(instantiate, bool):
        instantiate = [instantiate] * len(closed.out_avals)
    box: list[Any] = []

    def known_fun(*known_ins: Any) -> list[Any]:
        parent = current_trace()
        unknown_trace = TangentTrace(parent, closed.jaxpr.debug_info)
        unknown_args = [
            unknown_trace.new_arg(a) for a, u in zip(closed.in_avals, unknowns, strict=True) if u
        ]
        known_it, unknown_it = iter(known_ins), iter(unknown_args)
        args = [next(unknown_it) if u else next(known_it) for u in unknowns]
        split = SplitTrace(parent, unknown_trace)
        with set_current_trace(split):
            outs = eval_jaxpr(closed, (), *args)
        out_unknowns = [
            split.is_unknown(o) or inst for o, inst in zip(outs, instantiate, strict=True)
        ]
        jaxpr, consts = unknown_trace.finish(
            [a.jaxpr_var for a in unknown_args],
            [o for o, u in zip(outs, out_unknowns, strict=True) if u],
        )
        unknown = residuals_in_jax_order(prune_residuals(jaxpr, consts))
        box.extend([unknown, out_unknowns])
        known_outs = [o for o, u in zip(outs, out_unknowns, strict=True) if not u]
        return [*known_outs, *unknown.consts]

    known_avals = [a for a, u in zip(closed.in_avals, unknowns, strict=True) if not u]
    known = trace_to_jaxpr(known_fun, known_avals, closed.jaxpr.debug_info)
    unknown, out_unknowns = box
    res_avals = [v.aval for v in unknown.jaxpr.constvars]
    opened = unknown.jaxpr.replace(
        constvars=(), invars=(*unknown.jaxpr.constvars, *unknown.jaxpr.invars)
    )
    return known, ClosedJaxpr(opened, []), out_unknowns, res_avals


class _Node:
    """A value of JAX's partial-evaluation trace, as its topological sort sees it."""

    __slots__ = ("const", "parents")

    def __init__(self, parents: Sequence[_Node], const: int | None = None) -> None:
        self.parents = parents
        self.const = const


def _toposort(end_nodes: Sequence[_Node]) -> list[_Node]:
    """JAX's topological sort (`jaxlib.utils.topological_sort`): parents before children."""
    ends = list({id(n): n for n in end_nodes}.values())
    counts: dict[int, int] = {}
    stack = list(ends)
    while stack:
        node = stack.pop()
        if id(node) in counts:
            counts[id(node)] += 1
        else:
            counts[id(node)] = 1
            stack.extend(node.parents)
    for n in ends:
        counts[id(n)] -= 1
    ordered: list[_Node] = []
    childless = [n for n in ends if counts[id(n)] == 0]
    while childless:
        node = childless.pop()
        ordered.append(node)
        for parent in node.parents:
            if counts[id(parent)] == 1:
                childless.append(parent)
            else:
                counts[id(parent)] -= 1
    ordered.reverse()
    return ordered


KeptEffect: TypeAlias = Callable[[Effect], bool]
"""`kept(effect)`: whether JAX's partial evaluator keeps a handle on an equation with `effect`."""

partial_eval_kept_effects: list[KeptEffect] = []
"""JAX's `partial_eval_kept_effects`, as tests each package registers for its own effects
(Refs for their reads, writes and accumulations; callbacks for debug prints): a staged
equation with such an effect is a root of the topological sort that orders residuals, as
the staged outputs are."""


def _kept(eqn: JaxprEqn) -> bool:
    return any(kept(e) for e in eqn.effects for kept in partial_eval_kept_effects)


def residuals_in_jax_order(closed: ClosedJaxpr) -> ClosedJaxpr:
    """`closed` with its constvars (residuals) in the order JAX's partial evaluation gives
    them: the order its topological sort of the staged values (its inputs, outputs and
    equations with kept effects) meets them, each use of a known value being a node of its
    own."""
    jaxpr = closed.jaxpr
    if len(jaxpr.constvars) < 2:
        return closed
    const_index = {v: i for i, v in enumerate(jaxpr.constvars)}
    inputs = {v: _Node(()) for v in jaxpr.invars}
    produced: dict[Var, _Node] = {}

    def node(atom: Atom) -> _Node:
        if isinstance(atom, Var):
            if atom in const_index:
                return _Node((), const_index[atom])
            found = inputs.get(atom)
            return found if found is not None else produced[atom]
        return _Node(())

    handles: list[_Node] = []
    for eqn in jaxpr.eqns:
        parents = [node(x) for x in eqn.invars]
        for v in eqn.outvars:
            produced[v] = _Node(parents)
        if eqn.effects and _kept(eqn):
            handles.append(_Node(parents))
    order: list[int] = []
    for n in _toposort([*inputs.values(), *(node(v) for v in jaxpr.outvars), *handles]):
        if n.const is not None and n.const not in order:
            order.append(n.const)
    order += [i for i in range(len(jaxpr.constvars)) if i not in order]
    if order == list(range(len(order))):
        return closed
    constvars = [jaxpr.constvars[i] for i in order]
    return ClosedJaxpr(jaxpr.replace(constvars=constvars), [closed.consts[i] for i in order])
