"""Transposition of linear jaxprs: the backward pass of reverse mode.

`backward_pass` evaluates a jaxpr that is linear in some inputs (marked `UndefinedPrimal`):
a forward sweep applies every equation that reads no linear value (by binding it, so under a
trace it is staged), then a reverse sweep hands each linear equation's output cotangents to
its rule in `transpose_rules`, accumulating input cotangents with `add_any` as they arrive.
Cotangents are symbolic `Zero`s until something nonzero reaches them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeAlias

from lamina_core.config import replaying_equations
from lamina_core.interpreters.zeros import Zero, add_tangents
from lamina_core.ir import (
    AbstractValue,
    ClosedJaxpr,
    DropVar,
    Jaxpr,
    JaxprEqn,
    Literal,
    Primitive,
    RuleTable,
    Transform,
    Var,
    fix_source_info,
    name_stack_var,
    types_match,
    unfix_source_info,
)
from lamina_core.trace import typeof


class UndefinedPrimal:
    """A linear input of a transpose rule: only its type is known."""

    __slots__ = ("aval",)

    def __init__(self, aval: AbstractValue) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return f"UndefinedPrimal({self.aval.str_short(True)})"


def is_undefined(x: Any) -> bool:
    return type(x) is UndefinedPrimal


def cotangents_per_arg(
    args: Sequence[Any], nonzero: Iterable[bool], outs: Iterable[Any]
) -> list[Any]:
    """A call's transpose rule's result: None for each defined argument and, for each linear
    one in order, the next of `outs` where `nonzero` says so, else a `Zero` of its type.

    `outs` holds the transposed call's outputs, one per nonzero linear argument.
    """
    nonzero_it, outs_it = iter(nonzero), iter(outs)
    return [
        None if not is_undefined(a) else next(outs_it) if next(nonzero_it) else Zero(a.aval)
        for a in args
    ]


TransposeRule: TypeAlias = Callable[..., Sequence[Any]]
"""`rule(ct, *args, **params) -> cts`: one cotangent (or None) per argument.

Linear arguments arrive as `UndefinedPrimal`; `ct` is the output cotangent (a list for
multiple-result primitives) and is never all-`Zero`.
"""


transpose_rules: RuleTable[TransposeRule] = RuleTable("transpose")


def transpose_rule(prim: Primitive) -> TransposeRule:
    rule = transpose_rules.get(prim)
    if rule is None:
        raise NotImplementedError(
            f"Transpose rule (for reverse-mode differentiation) for '{prim.name}' not implemented"
        )
    return rule


class _Accum:
    """The cotangent of one linear variable, summed as contributions arrive."""

    __slots__ = ("aval", "val")

    def __init__(self, aval: AbstractValue) -> None:
        self.aval = aval
        self.val: Any = Zero(aval)

    def add(self, ct: Any) -> None:
        if ct is None:
            return
        ct_aval = ct.aval if type(ct) is Zero else typeof(ct)
        # Equal types (the usual case) match without `types_match`'s normalizing.
        if (
            ct_aval != self.aval
            and not types_match(ct_aval, self.aval)
            and getattr(ct_aval, "shape", None) != getattr(self.aval, "shape", None)
        ):
            raise ValueError(
                f"Expected cotangent type {self.aval.str_short(True)} but got "
                f"{ct_aval.str_short(True)}"
            )
        self.val = add_tangents(self.val, ct)


def backward_pass(
    jaxpr: Jaxpr,
    consts: Sequence[Any],
    args: Sequence[Any],
    cts_out: Sequence[Any],
    start_cts: Sequence[Any] | None = None,
    *,
    transform_stack: bool = False,
) -> list[Any]:
    """The cotangents of the `UndefinedPrimal` inputs of `jaxpr` (in order; `Zero` if none).

    `args` holds a value for every other input; `cts_out` one cotangent per output.
    `start_cts`, one per linear input, are what their cotangents accumulate onto (a loop's
    running sums), `Zero` by default. `transform_stack` (user-level transposition: `vjp`,
    `linear_transpose`) names the transposed equations `transpose(...)` in their name stacks.
    """
    for prepare in transpose_preparers:
        jaxpr = prepare(jaxpr)
    with replaying_equations():
        return _backward_pass(jaxpr, consts, args, cts_out, start_cts, transform_stack)


transpose_preparers: list[Callable[[Jaxpr], Jaxpr]] = []
"""Passes run on a linear jaxpr before it is transposed, registered by upper layers: Refs
discharge the mutable state a linear program keeps internally (tangent Refs) into values."""


def _backward_pass(
    jaxpr: Jaxpr,
    consts: Sequence[Any],
    args: Sequence[Any],
    cts_out: Sequence[Any],
    start_cts: Sequence[Any] | None,
    transform_stack: bool,
) -> list[Any]:
    linear_args = [a for a in args if is_undefined(a)]
    starts = iter(start_cts) if start_cts is not None else None
    if all(type(ct) is Zero for ct in cts_out) and not jaxpr.effects:
        if starts is not None:
            return list(starts)
        return [Zero(a.aval) for a in linear_args]
    env: dict[Var, Any] = dict(zip(jaxpr.constvars, consts, strict=True))
    accums: list[_Accum] = []
    for v, a in zip(jaxpr.invars, args, strict=True):
        if is_undefined(a):
            acc = _Accum(a.aval)
            if starts is not None:
                acc.val = next(starts)
            accums.append(acc)
            env[v] = acc
        else:
            env[v] = a

    # Each linear equation with its operands: what they read is the same in the reverse sweep.
    base = name_stack_var.get()
    linear_eqns: list[tuple[JaxprEqn, list[Any]]] = []
    for eqn in jaxpr.eqns:
        ins = [v.val if isinstance(v, Literal) else env[v] for v in eqn.invars]
        if _Accum in map(type, ins):
            for v in eqn.outvars:
                env[v] = _Accum(v.aval)
            linear_eqns.append((eqn, ins))
            continue
        names = eqn.source_info.name_stack
        named = name_stack_var.set(base + names) if names else None
        try:
            out = eqn.primitive.bind(*ins, **eqn.params)
        finally:
            if named is not None:
                name_stack_var.reset(named)
        if eqn.primitive.multiple_results:
            env.update(zip(eqn.outvars, out, strict=True))
        else:
            env[eqn.outvars[0]] = out
    if transform_stack:
        base = (*base, Transform("transpose"))
    for out, ct in zip(jaxpr.outvars, cts_out, strict=True):
        if isinstance(out, Var):
            target = env.get(out)
            if type(target) is _Accum:
                target.add(ct)
    for eqn, ins in reversed(linear_eqns):
        cts_in = [Zero(v.aval) if isinstance(v, DropVar) else env.pop(v).val for v in eqn.outvars]
        if all(type(ct) is Zero for ct in cts_in) and not eqn.effects:
            continue
        undefined = [UndefinedPrimal(x.aval) if type(x) is _Accum else x for x in ins]
        rule = transpose_rule(eqn.primitive)
        # The transposed equations come from this equation's line of the user's program, and
        # carry its names below the current ones.
        token = fix_source_info(eqn.source_info)
        names_token = name_stack_var.set(base + eqn.source_info.name_stack)
        try:
            cts = rule(
                cts_in if eqn.primitive.multiple_results else cts_in[0], *undefined, **eqn.params
            )
            for x, ct in zip(ins, cts, strict=True):
                if type(x) is _Accum:
                    x.add(ct)
        finally:
            name_stack_var.reset(names_token)
            unfix_source_info(token)
    return [acc.val for acc in accums]


def transpose_closed(
    closed: ClosedJaxpr, linear: Sequence[bool], args: Sequence[Any], cts_out: Sequence[Any]
) -> list[Any]:
    """`backward_pass` of a closed jaxpr; `args` are the non-linear inputs, in order."""
    it = iter(args)
    full = [
        UndefinedPrimal(v.aval) if lin else next(it)
        for v, lin in zip(closed.jaxpr.invars, linear, strict=True)
    ]
    return backward_pass(closed.jaxpr, closed.consts, full, cts_out)


__all__ = [
    "TransposeRule",
    "UndefinedPrimal",
    "backward_pass",
    "cotangents_per_arg",
    "is_undefined",
    "transpose_closed",
    "transpose_rule",
    "transpose_rules",
]
