"""The two forms of closed-over constants, and the passes between them.

The literal form (seed 000, Lamina's default) keeps every constant as a `Literal` inside the
equations. The constvars form (JAX's previous implementation) binds each non-scalar constant
to a constvar of a `ClosedJaxpr`, in first-use order. `hoist` goes from the literal form to
the constvars form; `inline` goes back. They round-trip.

Sub-jaxprs: a primitive whose params hold jaxprs decides how its body's constants become
explicit operands (JAX's previous mode closes them over per primitive), so each such
primitive registers a rule in `hoist_rules`. A sub-jaxpr without a rule keeps its literals.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

import numpy as np

from lamina_core.ir import Atom, ClosedJaxpr, Jaxpr, JaxprEqn, Literal, RuleTable, Var
from lamina_core.trace import is_registered_value

HoistRule: TypeAlias = Callable[[JaxprEqn, "ConstBinder"], JaxprEqn]
"""`rule(eqn, binder)`: the equation with its sub-jaxprs' constants made operands; the rule
calls `binder.atom(value, aval)` to get the outer atom for each constant it lifts."""

hoist_rules: RuleTable[HoistRule] = RuleTable("constants hoisting")


def becomes_constvar(literal: Literal) -> bool:
    """What JAX's previous mode turns into a constvar: every non-scalar, device arrays, and
    values of hi types."""
    return (
        bool(np.ndim(literal.val) > 0) or is_registered_value(literal.val) or literal.aval.is_high
    )


def is_hi_literal(literal: Literal) -> bool:
    """What JAX's simplified mode still makes a constvar: a value of a hi type."""
    return literal.aval.is_high


class ConstBinder:
    """Collects the constvars of one jaxpr being hoisted, one per constant value."""

    def __init__(self, which: Callable[[Literal], bool] = becomes_constvar) -> None:
        self.which = which
        """Which literals become constvars."""
        self._vars: dict[int, Var] = {}
        self.constvars: list[Var] = []
        self.consts: list[Any] = []

    def var(self, literal: Literal) -> Var:
        var = self._vars.get(id(literal.val))
        if var is None:
            var = self._vars[id(literal.val)] = Var(literal.aval)
            self.constvars.append(var)
            self.consts.append(literal.val)
        return var

    def atom(self, atom: Atom) -> Atom:
        if isinstance(atom, Literal) and self.which(atom):
            return self.var(atom)
        return atom


def hoist(
    jaxpr: Jaxpr | ClosedJaxpr, which: Callable[[Literal], bool] = becomes_constvar
) -> ClosedJaxpr:
    """The constvars form of `jaxpr`: its non-scalar literals (those `which` picks) become
    constvars."""
    existing_vars: Sequence[Var] = ()
    existing_consts: Sequence[Any] = ()
    if isinstance(jaxpr, ClosedJaxpr):
        existing_vars, existing_consts, jaxpr = jaxpr.jaxpr.constvars, jaxpr.consts, jaxpr.jaxpr
    binder = ConstBinder(which)
    eqns = []
    for eqn in jaxpr.eqns:
        rule = hoist_rules.get(eqn.primitive)
        if rule is not None:
            eqn = rule(eqn, binder)
        invars = tuple(binder.atom(a) for a in eqn.invars)
        if invars != eqn.invars:
            eqn = eqn.replace(invars=invars)
        eqns.append(eqn)
    outvars = [binder.atom(a) for a in jaxpr.outvars]
    hoisted = jaxpr.replace(
        constvars=(*existing_vars, *binder.constvars), outvars=outvars, eqns=eqns
    )
    return ClosedJaxpr(hoisted, [*existing_consts, *binder.consts])


def inline(closed: ClosedJaxpr) -> Jaxpr:
    """The literal form of `closed`: constvars bound to constants become literals.

    Constvars whose values are tracers of an enclosing trace are not constants and stay.
    """
    jaxpr = closed.jaxpr
    replaced: dict[Var, Any] = {}
    kept: list[Var] = []
    for var, value in zip(jaxpr.constvars, closed.consts, strict=True):
        if is_registered_value(value) or isinstance(value, (np.ndarray, np.generic)):
            replaced[var] = value
        else:
            kept.append(var)

    def atom(a: Atom) -> Atom:
        if isinstance(a, Var) and a in replaced:
            return Literal(replaced[a], a.aval)
        return a

    eqns = [
        e.replace(invars=tuple(atom(a) for a in e.invars))
        if any(isinstance(a, Var) and a in replaced for a in e.invars)
        else e
        for e in jaxpr.eqns
    ]
    return jaxpr.replace(constvars=kept, outvars=[atom(a) for a in jaxpr.outvars], eqns=eqns)
