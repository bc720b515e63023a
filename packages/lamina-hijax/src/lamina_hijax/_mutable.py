"""Calls taking values of mutable hi types (boxes), lowered to calls of arrays (JAX's
`lower_jaxpr` for mutable inputs).

A jaxpr taking a box is run once on tracers of its arrays: each box input is rebuilt from
its arrays as it was on entry (`new_from_loval` with the input's initial data), the
equations on boxes apply their rule on values to those Python objects, and the boxes' arrays
as they are at the end (`read_loval_out` with the final data) become outputs, before the
call's own. The caller passes each box's arrays in (`read_loval_in`) and writes the final
ones back into it (`update_from_loval2`).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lamina_core import tree_util
from lamina_core.interpreters import trace_to_jaxpr
from lamina_core.ir import (
    AbstractValue,
    ClosedJaxpr,
    Jaxpr,
    Literal,
    Primitive,
    Var,
)
from lamina_core.trace import typeof


@dataclass(frozen=True, slots=True)
class LoVals:
    """A mutable value's arrays as its type's `read_loval_out` gave them (a list or any
    pytree), for its `update_from_loval2`: `unflatten()` gives them back in that form."""

    leaves: tuple[Any, ...]
    treedef: Any

    def unflatten(self) -> Any:
        return tree_util.tree_unflatten(self.treedef, list(self.leaves))

    @staticmethod
    def flatten(x: Any) -> LoVals:
        leaves, treedef = tree_util.tree_flatten(x)
        return LoVals(tuple(leaves), treedef)


def takes_mutable(jaxpr: Jaxpr) -> bool:
    """Whether `jaxpr` takes a value of a mutable hi type."""
    return any(v.aval.has_qdd for v in jaxpr.invars)


def makes_mutable(jaxpr: Jaxpr) -> bool:
    """Whether an equation of `jaxpr` makes a value of a mutable hi type (a box it uses
    inside only)."""
    return any(v.aval.has_qdd for e in jaxpr.eqns for v in e.outvars)


def is_mutable_value(x: Any) -> bool:
    """Whether `x` is a concrete value of a mutable hi type (a box)."""
    return bool(getattr(typeof(x), "has_qdd", False))


def _out_lovals(aval: Any, qdd: Any, val: Any) -> LoVals:
    read = getattr(aval, "read_loval_out", None) or aval.read_loval
    return LoVals.flatten(read(qdd, val))


def _in_lovals(aval: Any, qdd: Any, val: Any) -> list[Any]:
    read = getattr(aval, "read_loval_in", None) or aval.read_loval
    return list(read(qdd, val))


def _lo_in_avals(v: Var) -> list[AbstractValue]:
    if v.aval.has_qdd:
        return list(v.aval.lo_ty_qdd(v.initial_qdd))  # type: ignore[attr-defined]  # a MutableHiType
    return [v.aval]


_lowered: weakref.WeakKeyDictionary[Jaxpr, tuple[ClosedJaxpr, tuple[Any, ...]]] = (
    weakref.WeakKeyDictionary()
)


def lower_mutable(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, tuple[Any, ...]]:
    """`closed` (taking boxes) as a jaxpr of their arrays: it takes each box's arrays on
    entry in the box's place and returns, before its own outputs, each box's arrays at the
    end; with the tree of each box's final arrays (for `write_back`)."""
    known = _lowered.get(closed.jaxpr)
    if known is not None and known[0].consts == closed.consts:
        return known
    jaxpr = closed.jaxpr
    trees: list[Any] = []

    def run(*flat: Any) -> list[Any]:
        it = iter(flat)
        env: dict[Var, Any] = {}
        for v in jaxpr.invars:
            xs = [next(it) for _ in _lo_in_avals(v)]
            if v.aval.has_qdd:
                env[v] = v.aval.new_from_loval(v.initial_qdd, *xs)  # type: ignore[attr-defined]  # a MutableHiType
            else:
                env[v] = xs[0]
        env.update(zip(jaxpr.constvars, closed.consts, strict=True))
        outs = run_eqns(jaxpr, env)
        for out in jaxpr.outvars:
            if out.aval.has_qdd:  # as JAX, whose mutable types cannot lower a returned value
                raise AttributeError(
                    f"'{type(out.aval).__name__}' object has no attribute 'lower_val'"
                )
        finals: list[Any] = []
        trees.clear()
        for v in jaxpr.invars:
            if v.aval.has_qdd:
                lo = _out_lovals(v.aval, v.final_qdd, env[v])
                trees.append(lo.treedef)
                finals.extend(lo.leaves)
        return [*finals, *outs]

    in_avals = [a for v in jaxpr.invars for a in _lo_in_avals(v)]
    lowered = trace_to_jaxpr(run, in_avals, jaxpr.debug_info, lowering=True)
    result = (lowered, tuple(trees))
    _lowered[closed.jaxpr] = result
    return result


LoweringRule = Callable[[dict[str, Any], list[Any]], list[Any]]
mutable_lowering_rules: dict[Primitive, LoweringRule] = {}
"""How primitives holding jaxprs (calls, control flow) apply to Python boxes while a
program of boxes is lowered: `rule(params, args) -> outputs`."""


def run_eqns(jaxpr: Jaxpr, env: dict[Var, Any]) -> list[Any]:
    """`jaxpr`'s equations applied to `env`'s values (boxes as Python objects) under a
    lowering trace, where hi primitives apply their rules on values: the outputs."""

    def read(a: Any) -> Any:
        return a.val if isinstance(a, Literal) else env[a]

    for eqn in jaxpr.eqns:
        ins = [read(a) for a in eqn.invars]
        rule = mutable_lowering_rules.get(eqn.primitive)
        if rule is not None and any(is_mutable_value(x) for x in ins):
            outs = rule(dict(eqn.params), ins)
        else:
            out = eqn.primitive.bind(*ins, **eqn.params)
            outs = list(out) if eqn.primitive.multiple_results else [out]
        env.update(zip(eqn.outvars, outs, strict=True))
    return [read(a) for a in jaxpr.outvars]


def lower_mutable_args(jaxpr: Jaxpr, args: Sequence[Any]) -> list[Any]:
    """The arguments of `lower_mutable(jaxpr)`: each box replaced by its arrays on entry."""
    flat: list[Any] = []
    for v, x in zip(jaxpr.invars, args, strict=True):
        if v.aval.has_qdd:
            flat.extend(_in_lovals(v.aval, v.initial_qdd, x))
        else:
            flat.append(x)
    return flat


def write_back(
    jaxpr: Jaxpr, args: Sequence[Any], trees: Sequence[Any], outs: Sequence[Any]
) -> list[Any]:
    """The boxes among `args` updated to their final arrays (the first of `outs`, in the
    trees `lower_mutable` gave); the call's own outputs (the rest)."""
    it = iter(outs)
    boxes = [(v, x) for v, x in zip(jaxpr.invars, args, strict=True) if v.aval.has_qdd]
    for (v, box), treedef in zip(boxes, trees, strict=True):
        lo = LoVals(tuple(next(it) for _ in range(treedef.num_leaves)), treedef)
        v.aval.update_from_loval2(v.final_qdd, box, lo)  # type: ignore[attr-defined]  # a MutableHiType
    return list(it)


__all__ = [
    "LoVals",
    "is_mutable_value",
    "lower_mutable",
    "lower_mutable_args",
    "makes_mutable",
    "mutable_lowering_rules",
    "run_eqns",
    "takes_mutable",
    "write_back",
]
