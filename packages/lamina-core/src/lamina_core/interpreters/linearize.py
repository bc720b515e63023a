"""Linearization: run a function once, computing primals and staging a linear tangent jaxpr.

This is how reverse mode works, as in JAX 0.10.2 (direct linearization, not jvp followed by
partial evaluation). A `LinearizeTrace` applies primal operations on its parent trace and
stages tangent operations into a `TangentTrace`; the values of the parent trace the tangent
equations read become the tangent jaxpr's constvars, the *residuals*, in order of first use.

A primitive with a rule in `linearization_rules` splits itself; any other runs its jvp rule
under a `SplitTrace`, which sends operations on known (primal-side) values to the parent and
operations touching a tangent to the tangent trace. So tangent-independent work in a jvp rule
(`cos x` for `sin`) happens on the primal side and is saved as a residual.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any, TypeAlias

from lamina_core.interpreters.jvp import (
    PrimalTangentTrace,
    PrimalTangentTracer,
    jvp_rule,
    short,
)
from lamina_core.interpreters.partial_eval import SplitTrace, TangentTrace, prune_residuals
from lamina_core.interpreters.staging import StagingTracer
from lamina_core.interpreters.zeros import Zero, is_float0, zero_of
from lamina_core.ir import (
    ClosedJaxpr,
    DebugInfo,
    NameStack,
    Primitive,
    RuleTable,
    SourceInfo,
    current_source_info,
    fix_source_info,
    name_stack_var,
    transform_name_stack,
    unfix_source_info,
)
from lamina_core.trace import (
    Trace,
    call_under,
    current_trace,
    running_under,
    set_current_trace,
    typeof,
)

Linearized: TypeAlias = Callable[..., Any]
"""`linearized(residuals, *tangents) -> tangent_out(s)`, run under the tangent trace."""

LinearizationRule: TypeAlias = Callable[..., tuple[Any, Any, Sequence[Any], Linearized]]
"""`rule(nonzeros, *primals, **params) -> (primal_out, nonzeros_out, residuals, linearized)`.

Runs under the parent trace; `linearized` then runs under the tangent trace.
"""


linearization_rules: RuleTable[LinearizationRule] = RuleTable("linearization")

tangents_named_under_whole_stack: set[Primitive] = set()
"""Primitives whose tangent equations are named under the whole open name stack, not relative
to the linearization, as JAX's `process_custom_jvp_call` and `process_custom_vjp_call` stage
them. Through a jvp rule (custom_jvp's) the equations' own names follow the whole stack too,
so JAX's jaxprs name them `jvp(outer)/jvp(outer)/...`; Lamina prints what JAX prints."""

_for_vjp: ContextVar[bool] = ContextVar("lamina_linearizing_for_vjp", default=True)


def linearizing_for_vjp() -> bool:
    """For a linearization rule: True when the linear function it stages will only be
    transposed (`grad`, `vjp`), False for `linearize`, whose linear function is evaluated
    forward. A rule with a custom reverse rule (hi primitives' `vjp_fwd`) uses it only then."""
    return _for_vjp.get()


class LinearizeTracer(PrimalTangentTracer):
    """A primal value with a nonzero tangent staged in the tangent trace."""

    __slots__ = ()
    jax_name = "LinearizeTracer"

    def short_repr(self) -> str:
        tangent = typeof(self.tangent).str_short(True)
        return f"GradTracer(primal={short(self.primal)}, typeof(tangent)={tangent})"


class LinearizeTrace(PrimalTangentTrace):
    """Primal work on `parent`, tangent work staged into `tangent_trace`. Identity intended."""

    __slots__ = ("_names_base", "for_vjp", "tangent_trace")
    tracer_type = LinearizeTracer

    def __init__(self, parent: Trace, tangent_trace: TangentTrace, for_vjp: bool = True) -> None:
        super().__init__(parent)
        self.tangent_trace = tangent_trace
        self.for_vjp = for_vjp
        """False for `linearize`: the tangent jaxpr is run forward, not only transposed."""
        self._names_base = name_stack_var.get()

    def _tangent_names(self) -> NameStack:
        """The open name stack less the names open when this trace began: the tangent
        jaxpr's equations are named relative to it, as JAX's."""
        stack, base = name_stack_var.get(), self._names_base
        return stack[len(base) :] if stack[: len(base)] == base else stack

    def describe(self) -> str:
        return "LinearizeTrace"

    def apply_rule(
        self, prim: Primitive, primals: list[Any], tangents: list[Any], params: dict[str, Any]
    ) -> tuple[Any, Any]:
        rule = linearization_rules.get(prim)
        # Every equation the rule stages comes from the user's line that applied `prim`.
        token = fix_source_info(current_source_info())
        try:
            if rule is None:
                return self._linearize_from_jvp(prim, primals, tangents, params)
            parent = self.parent
            assert parent is not None
            nonzeros = [type(t) is not Zero for t in tangents]
            mode = _for_vjp.get()
            try:
                _for_vjp.set(self.for_vjp)  # inside: an interrupt as it returns resets it
                with running_under(parent):
                    primal_out, _, residuals, linearized = rule(nonzeros, *primals, **params)
            finally:
                _for_vjp.set(mode)
            whole = prim in tangents_named_under_whole_stack
            names = None if whole else name_stack_var.set(self._tangent_names())
            try:
                with running_under(self.tangent_trace):
                    return primal_out, linearized(residuals, *tangents)
            finally:
                if names is not None:
                    name_stack_var.reset(names)
        finally:
            unfix_source_info(token)

    def _linearize_from_jvp(
        self, prim: Primitive, primals: list[Any], tangents: list[Any], params: dict[str, Any]
    ) -> tuple[Any, Any]:
        rule = jvp_rule(prim)
        parent = self.parent
        assert parent is not None
        split = SplitTrace(parent, self.tangent_trace)
        staged = self.tangent_trace.eqns
        first = len(staged)
        primal_out, tangent_out = call_under(split, rule, primals, tangents, **params)
        if prim in tangents_named_under_whole_stack:
            whole = name_stack_var.get()
            for eqn in staged[first:]:
                info = eqn.source_info
                eqn.source_info = SourceInfo(info.code, info.lasti, whole + info.name_stack)
            return self._checked_outputs(prim, primal_out, tangent_out)
        names = self._tangent_names()
        absolute = split.named_absolutely
        if names is not name_stack_var.get() or absolute:
            for eqn in staged[first:]:  # just made here: renamed relative to the tangent jaxpr
                info = eqn.source_info
                stack = names + info.name_stack if any(e is eqn for e in absolute) else names
                eqn.source_info = SourceInfo(info.code, info.lasti, stack)
        return self._checked_outputs(prim, primal_out, tangent_out)

    def _checked_outputs(
        self, prim: Primitive, primal_out: Any, tangent_out: Any
    ) -> tuple[Any, Any]:
        outs = primal_out if prim.multiple_results else [primal_out]
        if any(self.is_tangent(p) for p in outs):
            raise ValueError(
                "Linearization failed to produce known values for all output primals. This is "
                "typically caused by attempting to differentiate a function uses an operation "
                "that does not support reverse-mode autodiff."
            )
        # A tangent computed from known values only is constant: as JAX, it counts as zero.
        if prim.multiple_results:
            tangent_out = [
                t if self.is_tangent(t) else zero_of(p)
                for p, t in zip(primal_out, tangent_out, strict=True)
            ]
        elif not self.is_tangent(tangent_out):
            tangent_out = zero_of(primal_out)
        return primal_out, tangent_out

    def is_tangent(self, x: Any) -> bool:
        return isinstance(x, StagingTracer) and x._trace is self.tangent_trace


def linearize_flat(
    fun: Callable[..., Sequence[Any]],
    primals: Sequence[Any],
    debug_info: DebugInfo | None = None,
    *,
    for_vjp: bool = True,
) -> tuple[list[Any], list[bool], ClosedJaxpr]:
    """Run `fun` (flat in, flat out) once on `primals`, linearizing it (`for_vjp`: the linear
    jaxpr will only be transposed, see `linearizing_for_vjp`).

    Returns the primal outputs, which outputs have a nonzero tangent, and the linear jaxpr
    from every input's tangent to the nonzero output tangents, closed over its residuals.
    Outputs of `fun` may include tracers of enclosing traces and constants.
    """
    parent = current_trace()
    tangent_trace = TangentTrace(parent, debug_info)
    trace = LinearizeTrace(parent, tangent_trace, for_vjp)
    tangent_args = [tangent_trace.new_arg(typeof(p).to_tangent_aval()) for p in primals]
    args = [
        p if is_float0(t.aval) else LinearizeTracer(trace, p, t)
        for p, t in zip(primals, tangent_args, strict=True)
    ]
    with set_current_trace(trace), transform_name_stack("jvp"):
        outs = fun(*args)
    primals_out, nonzeros, nz_tangents = [], [], []
    for out in outs:
        p, t = trace.pair(out)
        primals_out.append(p)
        nonzero = type(t) is not Zero
        nonzeros.append(nonzero)
        if nonzero:
            nz_tangents.append(t)
    jaxpr, consts = tangent_trace.finish([t.jaxpr_var for t in tangent_args], nz_tangents)
    return primals_out, nonzeros, prune_residuals(jaxpr, consts)


__all__ = [
    "LinearizationRule",
    "LinearizeTrace",
    "LinearizeTracer",
    "Linearized",
    "TangentTrace",
    "linearization_rules",
    "linearize_flat",
    "linearizing_for_vjp",
    "prune_residuals",
]
