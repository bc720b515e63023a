"""The values printed jaxpr text leaves out, in the order it prints them: what `parse` takes.

The order is the printer's: shared sub-jaxprs (`let _name = … in`) first, then the top-level
jaxpr; within a jaxpr its constvars' values (for a closed jaxpr), then each equation's jaxpr
params in the order printed (sorted by name) before its operands, then the outputs. Array
literals print as `[...]`; scalars print in full and are not listed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core.ir._jaxpr import ClosedJaxpr, Jaxpr, Literal
from lamina_core.ir._pretty import PpContext, _share_jaxprs


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
            out.extend(a.val for a in eqn.invars if isinstance(a, Literal) and np.ndim(a.val))
        out.extend(a.val for a in jaxpr.outvars if isinstance(a, Literal) and np.ndim(a.val))

    collect(closed.jaxpr)
    for _, sub in shared_list:
        walk(sub, consts_of.get(sub, ()))
    walk(closed.jaxpr, closed.consts)
    return out
