"""Transposition of linear jaxprs: the backward pass of reverse mode.

`backward_pass` evaluates a jaxpr that is linear in some inputs (marked `UndefinedPrimal`):
a forward sweep applies every equation that reads no linear value (by binding it, so under a
trace it is staged), then a reverse sweep hands each linear equation's output cotangents to
its rule in `transpose_rules`, accumulating input cotangents with `add_any` as they arrive.
Cotangents are symbolic `Zero`s until something nonzero reaches them.

A tangent Ref the linear program makes (`ref_transposition.creators`) has a Ref as its
cotangent (`RefAccum`), as in JAX: equations reading such Refs are transposed by their
`fancy_transpose_rules`, which add into the cotangent Refs in place.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeAlias

from lamina_core.config import replaying_equations
from lamina_core.interpreters.zeros import Zero, add_tangents, zeros_like_aval
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

    def freeze(self) -> Any:
        return self.val


class RefTransposition:
    """How the backward pass keeps cotangents in Refs, registered by lamina-refs: the
    primitives making a linear program's tangent Refs (`creators`: "new", "empty" or
    "freeze") and the operations on the cotangent Refs the transposed program makes."""

    def __init__(self) -> None:
        self.creators: dict[Primitive, str] = {}
        self.new_ref: Callable[[Any], Any] = _unregistered
        self.addupdate: Callable[[Any, Any], None] = _unregistered
        self.freeze: Callable[[Any], Any] = _unregistered
        self.inner_aval: Callable[[AbstractValue], AbstractValue] = _unregistered


def _unregistered(*args: Any) -> Any:
    raise NotImplementedError("Refs are not registered")


ref_transposition = RefTransposition()


class RefAccum:
    """The cotangent of a tangent Ref: a Ref made when the first cotangent arrives (or when
    a rule needs one, `inst`), which later cotangents are added into in place."""

    __slots__ = ("aval", "ref")

    def __init__(self, aval: AbstractValue, ref: Any = None) -> None:
        self.aval = aval
        self.ref = ref

    def add(self, ct: Any) -> None:
        if ct is None or type(ct) is Zero:
            return
        if self.ref is None:
            self.ref = ref_transposition.new_ref(ct)
        else:
            ref_transposition.addupdate(self.ref, ct)

    def freeze(self) -> Any:
        return Zero(self.aval) if self.ref is None else ref_transposition.freeze(self.ref)

    def inst(self) -> RefAccum:
        if self.ref is None:
            self.ref = ref_transposition.new_ref(zeros_like_aval(self.aval))
        return self


_ACCUMS: frozenset[type] = frozenset({_Accum, RefAccum})


def is_accum(x: Any) -> bool:
    """Whether `x` is a backward pass's accumulator (of a value or of a tangent Ref)."""
    return type(x) in _ACCUMS


def ValAccum(aval: AbstractValue, start: Any = None) -> _Accum:
    """The accumulator of a linear value's cotangent, starting from `start` (`Zero`)."""
    acc = _Accum(aval)
    if start is not None:
        acc.val = start
    return acc


FancyTransposeRule: TypeAlias = Callable[..., None]
"""`rule(ct, *args, **params)` for equations reading tangent Refs: linear arguments arrive as
their accumulators (`RefAccum` for Refs), which the rule adds its cotangents into."""

fancy_transpose_rules: RuleTable[FancyTransposeRule] = RuleTable("fancy transpose")


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
        if is_accum(a):
            env[v] = a
        elif is_undefined(a):
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
    creators = ref_transposition.creators
    for eqn in jaxpr.eqns:
        ins = [v.val if isinstance(v, Literal) else env[v] for v in eqn.invars]
        made = creators.get(eqn.primitive)
        if made is not None and (made != "freeze" or is_accum(ins[0])):
            # As JAX's: a tangent Ref's cotangent is kept in a Ref of its own.
            (out_v,) = eqn.outvars
            env[out_v] = (
                _Accum(out_v.aval.to_tangent_aval())
                if made == "freeze"
                else RefAccum(ref_transposition.inner_aval(out_v.aval).to_tangent_aval())
            )
            linear_eqns.append((eqn, ins))
            continue
        if not _ACCUMS.isdisjoint(map(type, ins)):  # one C-level test per equation
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
            if target is not None and is_accum(target):
                target.add(ct)
    for eqn, ins in reversed(linear_eqns):
        # The transposed equations come from this equation's line of the user's program, and
        # carry its names below the current ones.
        token = fix_source_info(eqn.source_info)
        names_token = name_stack_var.set(base + eqn.source_info.name_stack)
        try:
            _transpose_eqn(eqn, ins, env)
        finally:
            name_stack_var.reset(names_token)
            unfix_source_info(token)
    return [acc.val for acc in accums]


def _transpose_eqn(eqn: JaxprEqn, ins: list[Any], env: dict[Var, Any]) -> None:
    made = ref_transposition.creators.get(eqn.primitive)
    if made is not None:
        acc = env.pop(eqn.outvars[0], None)
        ct = acc.freeze() if acc is not None else None
        if made != "empty" and is_accum(ins[0]):
            ins[0].add(ct)
        return
    cts_in = [Zero(v.aval) if isinstance(v, DropVar) else env.pop(v).freeze() for v in eqn.outvars]
    if all(type(ct) is Zero for ct in cts_in) and not eqn.effects:
        return
    ct_arg = cts_in if eqn.primitive.multiple_results else cts_in[0]
    if RefAccum in map(type, ins):
        fancy_transpose_rules[eqn.primitive](ct_arg, *ins, **eqn.params)
        return
    undefined = [UndefinedPrimal(x.aval) if type(x) is _Accum else x for x in ins]
    cts = transpose_rule(eqn.primitive)(ct_arg, *undefined, **eqn.params)
    for x, ct in zip(ins, cts, strict=True):
        if type(x) is _Accum:
            x.add(ct)


def backward_pass_accums(
    jaxpr: Jaxpr, consts: Sequence[Any], args: Sequence[Any], cts_out: Sequence[Any]
) -> None:
    """`backward_pass` whose linear inputs arrive as accumulators (`ValAccum`, `RefAccum`),
    which it adds their cotangents into (a transpose rule's body, as JAX's backward_pass3)."""
    with replaying_equations():
        _backward_pass(jaxpr, consts, args, cts_out, None, False)


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
    "FancyTransposeRule",
    "RefAccum",
    "RefTransposition",
    "TransposeRule",
    "UndefinedPrimal",
    "ValAccum",
    "backward_pass",
    "backward_pass_accums",
    "cotangents_per_arg",
    "fancy_transpose_rules",
    "is_accum",
    "is_undefined",
    "ref_transposition",
    "transpose_closed",
    "transpose_rule",
    "transpose_rules",
]
