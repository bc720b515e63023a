"""The values printed jaxpr text leaves out, in the order it prints them: what `parse` takes.

The order is the printer's: shared sub-jaxprs (`let _name = … in`) first, then the top-level
jaxpr; within a jaxpr its constvars' values (for a closed jaxpr), then each equation's jaxpr
params in the order printed (sorted by name) before its operands, then the outputs. Array
literals print as `[...]`; scalars print in full and are not listed. An equation printed in a
form of its own may print its operands in another order, or one twice (a Ref's kept `swap`
prints its index on both sides): its layer says how (`register_printed_operands`), so that
each `[...]` of the text takes one value.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lamina_core.ir._jaxpr import Atom, ClosedJaxpr, Jaxpr, JaxprEqn, Literal
from lamina_core.ir._pretty import PpContext, _share_jaxprs

printed_operands: dict[str, Callable[[JaxprEqn], Sequence[Atom]]] = {}
"""By primitive name: the operands an equation prints, in print order (default: its operands)."""


def register_printed_operands(name: str, operands: Callable[[JaxprEqn], Sequence[Atom]]) -> None:
    """Say which operands an equation of the primitive `name` prints, in print order."""
    if printed_operands.setdefault(name, operands) is not operands:
        raise ValueError(f"the printed operands of '{name}' are already registered")


def elided_constants(closed: ClosedJaxpr) -> list[Any]:
    """The values the text of `closed` leaves out, in print order: what `parse` takes."""
    shared_list = _share_jaxprs(closed.jaxpr, PpContext())
    shared = {j for _, j in shared_list}
    consts_of: dict[Jaxpr, list[Any]] = {}
    out: list[Any] = []

    def collect(jaxpr: Jaxpr) -> None:
        for eqn in jaxpr.eqns:
            for value in eqn.params.values():
                for item in value if type(value) is tuple else (value,):
                    if isinstance(item, ClosedJaxpr):
                        consts_of.setdefault(item.jaxpr, item.consts)
                        collect(item.jaxpr)
                    elif isinstance(item, Jaxpr):
                        collect(item)

    def walk(jaxpr: Jaxpr, consts: Sequence[Any]) -> None:
        out.extend(consts)
        for eqn in jaxpr.eqns:
            for key in sorted(eqn.params):
                value = eqn.params[key]
                for item in value if type(value) is tuple else (value,):
                    if isinstance(item, ClosedJaxpr) and item.jaxpr not in shared:
                        walk(item.jaxpr, item.consts)
                    elif isinstance(item, Jaxpr) and item not in shared:
                        walk(item, ())
            shown = printed_operands.get(eqn.primitive.name)
            atoms = eqn.invars if shown is None else shown(eqn)
            out.extend(a.val for a in atoms if isinstance(a, Literal) and np.ndim(a.val))
        out.extend(a.val for a in jaxpr.outvars if isinstance(a, Literal) and np.ndim(a.val))

    collect(closed.jaxpr)
    for _, sub in shared_list:
        walk(sub, consts_of.get(sub, ()))
    walk(closed.jaxpr, closed.consts)
    return out
