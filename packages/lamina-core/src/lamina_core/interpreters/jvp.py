"""Forward-mode differentiation: the JVP interpreter and its rule table.

A `JVPTrace` carries each value with its tangent. A primitive whose tangents are all symbolic
zeros is applied by the parent trace alone; otherwise its rule from `jvp_rules` runs under the
parent and returns the primal and tangent outputs. Values the trace does not own (constants,
tracers of enclosing traces) enter with a zero tangent; outputs whose tangent is zero (or of
`float0` type) leave as plain primal values, so nothing is tracked that need not be.

Rules are written as formulas over the lax frontend (`defjvp`, `defjvp2`, `deflinear`) and
registered next to each primitive's definition; this module names no primitive but `add_any`.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, TypeAlias

import numpy as np

from lamina_core.interpreters.zeros import (
    Zero,
    add_any_p,
    add_tangents,
    instantiate_zeros,
    is_float0,
    zero_of,
)
from lamina_core.ir import AbstractValue, MissingRuleError, Primitive, RuleTable
from lamina_core.trace import (
    Trace,
    Tracer,
    bind_with_trace,
    current_trace,
    running_under,
    set_current_trace,
    typeof,
)

JVPRule: TypeAlias = Callable[..., Any]
"""`rule(primals, tangents, **params) -> (primal_out, tangent_out)`; tangents may be `Zero`."""


jvp_rules: RuleTable[JVPRule] = RuleTable("differentiation (jvp)")


def not_differentiable(prim: Primitive) -> None:
    """Declare that `prim` has no derivative: differentiating through it raises JAX's error."""
    non_differentiable.add(prim)


non_differentiable: set[Primitive] = set()

differentiated_always: set[Primitive] = set()
"""Primitives whose rule runs even when every tangent is zero: those creating mutable state
(`new_ref`), whose result must carry a tangent for what is later written into it."""


def jvp_rule(prim: Primitive) -> JVPRule:
    rule = jvp_rules.get(prim)
    if rule is None:
        raise NotImplementedError(f"Differentiation rule for '{prim.name}' not implemented")
    return rule


def short(x: Any) -> str:
    """`x` as tracer reprs show their contents: a tracer's short repr, else `str`."""
    return x.short_repr() if isinstance(x, Tracer) else str(x)


class PrimalTangentTracer(Tracer):
    """A primal value carried with its (nonzero) tangent: the tracers of differentiation.

    Python control flow on it looks at its primal, as in JAX (`if x > 0:` works under `grad`
    when the primal is concrete); as in JAX too, `float`, `complex` and NumPy conversion do
    not (they raise the tracer errors), while `int`, `bool`, `operator.index` and `item` do.
    """

    __slots__ = ("primal", "tangent")

    def __init__(self, trace: Trace, primal: Any, tangent: Any) -> None:
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    def short_repr(self) -> str:
        primal = self.primal.short_repr() if isinstance(self.primal, Tracer) else str(self.primal)
        tangent = (
            self.tangent.short_repr() if isinstance(self.tangent, Tracer) else str(self.tangent)
        )
        return f"JVPTracer(primal={primal}, tangent={tangent})"

    @property
    def aval(self) -> AbstractValue:
        return typeof(self.primal)

    def __bool__(self) -> bool:
        return bool(self.primal)

    def __int__(self) -> int:
        return int(self.primal)

    def __index__(self) -> int:
        return operator.index(self.primal)

    def item(self, *args: Any) -> Any:
        primal = self.primal
        if isinstance(primal, Tracer):
            return primal.item(*args)
        return np.asarray(primal).item(*args)

    def where_created(self) -> str:
        return self.primal.where_created() if isinstance(self.primal, Tracer) else ""


class JVPTracer(PrimalTangentTracer):
    """A value of forward-mode differentiation: primal and tangent."""

    __slots__ = ()
    jax_name = "JVPTracer"


class PrimalTangentTrace(Trace):
    """A trace of differentiation inside `parent`: the values it owns are `tracer_type`s.

    A primitive whose tangents are all symbolic zeros (and that is not `differentiated_always`)
    is applied by the parent alone; any other goes to `apply_rule`, the one thing a subclass
    says. Outputs with a zero or `float0` tangent leave as plain primals. Identity is intended
    (tracers refer to it).
    """

    __slots__ = ()
    tracer_type: ClassVar[type[PrimalTangentTracer]]

    def cur_qdd(self, x: Any) -> Any:
        primal, _ = self.pair(x)  # a mutable value's state is its primal's
        assert self.parent is not None
        return self.parent.cur_qdd(primal)

    def pair(self, x: Any) -> tuple[Any, Any]:
        if isinstance(x, self.tracer_type) and x._trace is self:
            return x.primal, x.tangent
        return x, zero_of(x)

    def process_primitive(
        self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]
    ) -> Any:
        primals, tangents = [], []
        for x in args:
            p, t = self.pair(x)
            primals.append(p)
            tangents.append(t)
        parent = self.parent
        assert parent is not None
        if all(type(t) is Zero for t in tangents) and prim not in differentiated_always:
            return bind_with_trace(parent, prim, primals, params)
        primal_out, tangent_out = self.apply_rule(prim, primals, tangents, params)
        if prim.multiple_results:
            return [self.wrap(p, t) for p, t in zip(primal_out, tangent_out, strict=True)]
        return self.wrap(primal_out, tangent_out)

    def apply_rule(
        self, prim: Primitive, primals: list[Any], tangents: list[Any], params: dict[str, Any]
    ) -> tuple[Any, Any]:
        """`prim`'s primal and tangent outputs, some tangent being nonzero."""
        raise NotImplementedError

    def wrap(self, primal: Any, tangent: Any) -> Any:
        if type(tangent) is Zero or is_float0(typeof(tangent)):
            return primal
        return self.tracer_type(self, primal, tangent)


class JVPTrace(PrimalTangentTrace):
    """Forward-mode differentiation inside `parent`: rules from `jvp_rules` run under it."""

    __slots__ = ()
    tracer_type = JVPTracer

    def describe(self) -> str:
        return "JVPTrace"

    def apply_rule(
        self, prim: Primitive, primals: list[Any], tangents: list[Any], params: dict[str, Any]
    ) -> tuple[Any, Any]:
        rule = jvp_rule(prim)
        parent = self.parent
        assert parent is not None
        with running_under(parent):
            primal_out, tangent_out = rule(primals, tangents, **params)
        return primal_out, tangent_out


# --- rule helpers: families of primitives in one line each -------------------------------

TangentFormula = Callable[..., Any]
"""`formula(g, *primals, **params)`, or `formula(g, ans, *primals, **params)` for `defjvp2`."""


def _sum_tangents(terms: Sequence[Any], out: Any) -> Any:
    if not terms:
        return zero_of(out)
    return functools.reduce(add_tangents, terms)


def defjvp(prim: Primitive, *formulas: TangentFormula | None) -> None:
    """The tangent of `prim` is the sum over operands i of `formulas[i](g_i, *primals)`."""

    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        out = prim.bind(*primals, **params)
        terms = [
            f(t, *primals, **params)
            for f, t in zip(formulas, tangents, strict=False)
            if f is not None and type(t) is not Zero
        ]
        return out, _sum_tangents(terms, out)

    jvp_rules.set(prim, rule)


def defjvp2(prim: Primitive, *formulas: TangentFormula | None) -> None:
    """As `defjvp`, with the primal output passed too: `formulas[i](g_i, ans, *primals)`."""

    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        out = prim.bind(*primals, **params)
        terms = [
            f(t, out, *primals, **params)
            for f, t in zip(formulas, tangents, strict=False)
            if f is not None and type(t) is not Zero
        ]
        return out, _sum_tangents(terms, out)

    jvp_rules.set(prim, rule)


def defjvp_zero(prim: Primitive) -> None:
    """`prim` is piecewise constant: its tangent is zero (comparisons, rounding, argmax)."""

    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        out = prim.bind(*primals, **params)
        if prim.multiple_results:
            return out, [zero_of(o) for o in out]
        return out, zero_of(out)

    jvp_rules.set(prim, rule)


def linear_jvp(prim: Primitive) -> JVPRule:
    """The jvp rule of a primitive linear in all its operands: apply it to the tangents."""

    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        out = prim.bind(*primals, **params)
        if all(type(t) is Zero for t in tangents):
            if prim.multiple_results:
                return out, [zero_of(o) for o in out]
            return out, zero_of(out)
        return out, prim.bind(*[instantiate_zeros(t) for t in tangents], **params)

    return rule


def jvp_flat(
    fun: Callable[..., Sequence[Any]],
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    instantiate: bool | Sequence[bool] = True,
) -> tuple[list[Any], list[Any]]:
    """Run `fun` (flat in, flat out) forward-mode; tangents may be `Zero`.

    Returns the primal outputs and their tangents, zeros built where `instantiate` asks.
    """
    trace = JVPTrace(current_trace())
    args = [
        p if type(t) is Zero or is_float0(typeof(t)) else JVPTracer(trace, p, t)
        for p, t in zip(primals, tangents, strict=True)
    ]
    with set_current_trace(trace):
        outs = fun(*args)
    primals_out, tangents_out = [], []
    for out in outs:
        p, t = trace.pair(out)
        primals_out.append(p)
        tangents_out.append(t)
    if isinstance(instantiate, bool):
        instantiate = [instantiate] * len(outs)
    tangents_out = [
        instantiate_zeros(t) if inst else t
        for t, inst in zip(tangents_out, instantiate, strict=True)
    ]
    return primals_out, tangents_out


__all__ = [
    "JVPRule",
    "JVPTrace",
    "JVPTracer",
    "MissingRuleError",
    "PrimalTangentTrace",
    "PrimalTangentTracer",
    "add_any_p",
    "defjvp",
    "defjvp2",
    "defjvp_zero",
    "jvp_flat",
    "jvp_rules",
    "linear_jvp",
    "not_differentiable",
]
