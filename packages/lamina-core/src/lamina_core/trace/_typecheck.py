"""The jaxpr type checker: well-scoped variables and equations that type-check.

`check_jaxpr` verifies that every variable is bound once before it is used, that each
equation's output types are what its primitive's abstract evaluation gives for its input
types, and that every sub-jaxpr in the params checks too. Errors print the equation.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

from lamina_core.ir import (
    AbstractValue,
    ClosedJaxpr,
    DropVar,
    Jaxpr,
    JaxprEqn,
    Literal,
    Primitive,
    Var,
    jaxprs_in_params,
    types_match,
)
from lamina_core.trace._vma import abstract_eval


class JaxprTypeError(TypeError):
    """A jaxpr is ill-scoped or ill-typed."""


def _fail(message: str, eqn: JaxprEqn | None = None) -> JaxprTypeError:
    if eqn is None:
        return JaxprTypeError(message)
    where = eqn.source_info.summary() if eqn.source_info.code is not None else "unknown source"
    return JaxprTypeError(f"{message}\n  in equation: {eqn!r}\n  from {where}")


SubJaxprContext = Callable[..., contextlib.AbstractContextManager[Any]]
"""`context(**params)`: what a primitive's sub-jaxprs are checked inside (e.g. the named axes
a `shard_map` binds for its body's collectives)."""

sub_jaxpr_contexts: dict[Primitive, SubJaxprContext] = {}


def check_jaxpr(jaxpr: Jaxpr | ClosedJaxpr) -> None:
    """Raise `JaxprTypeError` if `jaxpr` (or any sub-jaxpr) is ill-scoped or ill-typed."""
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    bound: set[Var] = set()

    def bind(var: Var, eqn: JaxprEqn | None) -> None:
        if isinstance(var, DropVar):
            return
        if var in bound:
            raise _fail(f"variable {var!r} is bound more than once", eqn)
        bound.add(var)

    def read(atom: Var | Literal, eqn: JaxprEqn | None) -> AbstractValue:
        if isinstance(atom, Literal):
            return atom.aval
        if atom not in bound:
            raise _fail(f"variable {atom!r} is used before it is bound", eqn)
        return atom.aval

    for var in (*jaxpr.constvars, *jaxpr.invars):
        bind(var, None)
    for eqn in jaxpr.eqns:
        in_avals = [read(v, eqn) for v in eqn.invars]
        try:
            out = abstract_eval(eqn.primitive, in_avals, eqn.params)
        except Exception as err:
            raise _fail(f"'{eqn.primitive.name}' does not type-check: {err}", eqn) from err
        expected: Sequence[AbstractValue] = (
            list(out) if eqn.primitive.multiple_results else [out]  # type: ignore[arg-type,list-item]  # shape follows multiple_results
        )
        if len(expected) != len(eqn.outvars):
            raise _fail(
                f"'{eqn.primitive.name}' gives {len(expected)} results, the equation binds "
                f"{len(eqn.outvars)}",
                eqn,
            )
        for var, aval in zip(eqn.outvars, expected, strict=True):
            if not types_match(var.aval, aval):
                raise _fail(
                    f"'{eqn.primitive.name}' gives {aval.str_short(True)}, but the equation "
                    f"binds {var.aval.str_short(True)}",
                    eqn,
                )
            bind(var, eqn)
        context = sub_jaxpr_contexts.get(eqn.primitive)
        with context(**eqn.params) if context is not None else contextlib.nullcontext():
            for sub in jaxprs_in_params(eqn.params):
                check_jaxpr(sub)
    for atom in jaxpr.outvars:
        read(atom, None)
