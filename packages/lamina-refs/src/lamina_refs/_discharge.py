"""State discharge: a jaxpr using Refs becomes a functional jaxpr (JAX's `discharge_state`).

Each Ref is replaced by the value it holds: a Ref input becomes an input of its value type, and
its final value is appended to the outputs; a Ref created inside lives only as a value. Reads
become indexing, writes become indexed updates. Calls (`jit`, `closed_call`, ...) are
discharged by evaluating their callees inline; `scan` and `while` thread the values of the
Refs their bodies use as extra carries, `cond` as extra outputs of every branch: one rule for
each shape, reading where operands go from lamina-hijax's `call_layouts`. The runtime runs this
pass before lowering, so lamina-mlir lowers only Ref-free jaxprs, and aliases each Ref input
with the output carrying its final value (an in-place update).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from lamina_core.checkpoint import remat_p
from lamina_core.custom_derivatives import custom_jvp_call_p, custom_lin_p, custom_vjp_call_p
from lamina_core.interpreters import trace_to_jaxpr, zeros_like_aval
from lamina_core.ir import (
    AbstractValue,
    ClosedJaxpr,
    Jaxpr,
    JaxprEqn,
    Literal,
    Primitive,
    RuleTable,
    Var,
    jaxprs_in_params,
)
from lamina_core.lax import (
    cond_p,
    dynamic_index_in_dim,
    dynamic_update_index_in_dim,
    scan_p,
    while_p,
)
from lamina_core.sharding import manual_axes_env, shard_map_p
from lamina_core.trace import typeof
from lamina_core.transforms import closed_call_p, jit_p
from lamina_hijax import Role, call_layouts, map_callee
from lamina_refs._primitives import (
    REF_PRIMITIVES,
    addupdate_p,
    addupdate_value,
    empty_ref_p,
    free_ref_p,
    freeze_p,
    get_p,
    get_value,
    new_ref_p,
    swap_p,
    swap_value,
)
from lamina_refs._types import AbstractRef, RefEffect


class Cell:
    """A Ref during discharge: the value it holds now. Identity is intended."""

    __slots__ = ("dead", "local", "value")

    def __init__(self, value: Any, local: bool = False) -> None:
        self.value = value
        self.local = local
        """Created by the jaxpr being discharged (so it may be frozen there)."""
        self.dead = False
        """Frozen or freed: using it again is an error."""


DischargeRule = Callable[[JaxprEqn, list[Any]], list[Any]]
"""`rule(eqn, operands) -> outputs`: operands that are Refs arrive as `Cell`s, which the rule
updates with the Refs' final values."""

discharge_rules: RuleTable[DischargeRule] = RuleTable("state discharge")


_uses: weakref.WeakKeyDictionary[Jaxpr, bool] = weakref.WeakKeyDictionary()


def has_refs(jaxpr: Jaxpr) -> bool:
    """True if `jaxpr` takes Refs or uses them inside, in sub-jaxprs too (it must then be
    discharged to be lowered). Memoized per jaxpr."""
    known = _uses.get(jaxpr)
    if known is None:
        known = _uses[jaxpr] = (
            any(v.aval.mutable for v in (*jaxpr.constvars, *jaxpr.invars))
            or any(isinstance(e, RefEffect) for e in jaxpr.effects)
            or any(map(_eqn_uses_refs, jaxpr.eqns))
        )
    return known


def _eqn_uses_refs(eqn: JaxprEqn) -> bool:
    # Plain loops: every linear jaxpr `grad` transposes is scanned once, equation by equation.
    if eqn.primitive in REF_PRIMITIVES:
        return True
    for v in eqn.outvars:
        if v.aval.mutable:
            return True
    return any(has_refs(j) for j in jaxprs_in_params(eqn.params))


def _value_aval(aval: AbstractValue) -> AbstractValue:
    return aval.inner_aval if isinstance(aval, AbstractRef) else aval


_memo: dict[bool, weakref.WeakKeyDictionary[Jaxpr, Jaxpr]] = {
    True: weakref.WeakKeyDictionary(),
    False: weakref.WeakKeyDictionary(),
}


def discharge_state(jaxpr: Jaxpr, *, inputs: bool = True) -> Jaxpr:
    """`jaxpr` (without constvars) with its Refs replaced by values.

    Its Ref inputs become inputs of their value types; the final values of those Refs follow
    the original outputs, in input order. With `inputs=False` only the Refs created inside are
    discharged: Ref inputs stay Refs, read and written by the equations as before.
    """
    if jaxpr.constvars:
        raise ValueError("discharge_state takes a jaxpr without constvars (open it first)")
    known = _memo[inputs].get(jaxpr)
    if known is not None:
        return known
    is_ref = [inputs and isinstance(v.aval, AbstractRef) for v in jaxpr.invars]

    def run(*args: Any) -> list[Any]:
        cells = [Cell(a) if r else a for a, r in zip(args, is_ref, strict=True)]
        outs = interpret(jaxpr, cells)
        return [*outs, *(c.value for c, r in zip(cells, is_ref, strict=True) if r)]

    in_avals = [
        _value_aval(v.aval) if r else v.aval for v, r in zip(jaxpr.invars, is_ref, strict=True)
    ]
    out = trace_to_jaxpr(run, in_avals, jaxpr.debug_info).jaxpr
    _memo[inputs][jaxpr] = out
    return out


def interpret(jaxpr: Jaxpr, args: Sequence[Any], consts: Sequence[Any] = ()) -> list[Any]:
    """Evaluate `jaxpr` under the current trace with its Refs as `Cell`s (binding functional
    primitives for every read and write); returns the outputs."""
    env: dict[Var, Any] = dict(zip(jaxpr.constvars, consts, strict=True))
    env.update(zip(jaxpr.invars, args, strict=True))

    def read(atom: Any) -> Any:
        return atom.val if isinstance(atom, Literal) else env[atom]

    for eqn in jaxpr.eqns:
        ins = [read(a) for a in eqn.invars]
        outs = _discharge_eqn(eqn, ins)
        env.update(zip(eqn.outvars, outs, strict=True))
    return [read(a) for a in jaxpr.outvars]


_ON_A_REF = frozenset({get_p, swap_p, addupdate_p, freeze_p, free_ref_p})


def _creates_refs(eqn: JaxprEqn) -> bool:
    """A `new_ref`, or a call whose callee makes Refs of its own (which must become values)."""
    if eqn.primitive is new_ref_p or eqn.primitive is empty_ref_p:
        return True
    return any(_makes_refs(j) for j in jaxprs_in_params(eqn.params))


_makes: weakref.WeakKeyDictionary[Jaxpr, bool] = weakref.WeakKeyDictionary()


def _makes_refs(jaxpr: Jaxpr) -> bool:
    known = _makes.get(jaxpr)
    if known is None:
        known = _makes[jaxpr] = any(_creates_refs(e) for e in jaxpr.eqns)
    return known


def _discharge_eqn(eqn: JaxprEqn, ins: list[Any]) -> list[Any]:
    prim = eqn.primitive
    if prim in _ON_A_REF:
        needed = isinstance(ins[0], Cell)  # a Ref not discharged stays a Ref
        if needed and ins[0].dead:
            # JAX's message: its discharge has replaced the Ref by its (final) value.
            raise ValueError(
                f"`{prim.name}` must be called on `Ref` types: {typeof(ins[0].value)}."
            )
    else:
        needed = any(isinstance(x, Cell) for x in ins) or _creates_refs(eqn)
    if needed:
        rule = discharge_rules.get(prim)
        if rule is None:
            raise NotImplementedError(
                f"No state discharge rule implemented for primitive: {prim.name}"
            )
        return rule(eqn, ins)
    out = prim.bind(*ins, **eqn.params)
    return list(out) if prim.multiple_results else [out]


def _rule(prim: Primitive) -> Callable[[DischargeRule], DischargeRule]:
    return discharge_rules.register(prim)


@_rule(new_ref_p)
def _new_ref(eqn: JaxprEqn, ins: list[Any]) -> list[Any]:
    return [Cell(ins[0], local=True)]


@_rule(empty_ref_p)
def _empty_ref(eqn: JaxprEqn, ins: list[Any]) -> list[Any]:
    return [Cell(zeros_like_aval(eqn.params["ty"]), local=True)]


@_rule(free_ref_p)
def _free_ref(eqn: JaxprEqn, ins: list[Any]) -> list[Any]:
    ins[0].dead = True
    return []


def _frozen_elsewhere(eqn: JaxprEqn) -> ValueError:
    return ValueError(
        f"a Ref of type {eqn.invars[0].aval.str_short(short_dtypes=False)} that the "
        "function did not create was frozen: a Ref can only be frozen in the scope that "
        f"created it (freeze at {eqn.source_info.summary()})"
    )


@_rule(freeze_p)
def _freeze(eqn: JaxprEqn, ins: list[Any]) -> list[Any]:
    (cell,) = ins
    if not cell.local:
        raise _frozen_elsewhere(eqn)
    cell.dead = True
    return [cell.value]


def check_freezes(jaxpr: Jaxpr) -> None:
    """A `freeze` of a Ref the function takes (argument or closed over) is an error, even one
    whose result nobody reads (which dead-code elimination would drop before discharge)."""
    taken = {*jaxpr.constvars, *jaxpr.invars}
    for eqn in jaxpr.eqns:
        if eqn.primitive is freeze_p and eqn.invars[0] in taken:
            raise _frozen_elsewhere(eqn)


@_rule(get_p)
def _get(eqn: JaxprEqn, ins: list[Any]) -> list[Any]:
    cell, *idx = ins
    return [get_value(cell.value, tuple(idx), eqn.params["tree"])]


@_rule(swap_p)
def _swap(eqn: JaxprEqn, ins: list[Any]) -> list[Any]:
    cell, val, *idx = ins
    cell.value, old = swap_value(cell.value, val, tuple(idx), eqn.params["tree"])
    return [old]


@_rule(addupdate_p)
def _addupdate(eqn: JaxprEqn, ins: list[Any]) -> list[Any]:
    cell, val, *idx = ins
    cell.value = addupdate_value(cell.value, val, tuple(idx), eqn.params["tree"])
    return []


def _inline_call(eqn: JaxprEqn, ins: list[Any]) -> list[Any]:
    callee = eqn.params[call_layouts[eqn.primitive].callees[0].param]
    if isinstance(callee, ClosedJaxpr):
        return interpret(callee.jaxpr, ins, callee.consts)
    return interpret(callee, ins)


# Calls are evaluated inline; a custom rule's primal function too (its derivative rules apply
# to values, before discharge).
for _call in (jit_p, closed_call_p, remat_p, custom_jvp_call_p, custom_vjp_call_p):
    discharge_rules.set(_call, _inline_call)


@_rule(custom_lin_p)
def _custom_lin(eqn: JaxprEqn, ins: list[Any]) -> list[Any]:
    """A custom_vjp's linear part given a Ref's tangent (a Ref argument of the function): it
    only reads it, as the value it holds; bwd's cotangent for it is dropped."""
    outs = custom_lin_p.bind(*(x.value if isinstance(x, Cell) else x for x in ins), **eqn.params)
    return list(outs)


@_rule(shard_map_p)
def _shard_map(eqn: JaxprEqn, ins: list[Any]) -> list[Any]:
    """The body discharged: Refs it makes become values; a Ref operand's piece goes in as a
    value and its final piece comes out as an extra result, split as its operand was."""
    params = eqn.params
    body: Jaxpr = params["jaxpr"]
    is_cell = [isinstance(x, Cell) for x in ins]
    if len(_distinct_cells(ins)) != sum(is_cell):
        raise ValueError("shard_map: the same Ref is passed twice")
    manual = params["newly_manual_axes"] | frozenset(params["mesh"].manual_axes)
    with manual_axes_env(params["mesh"], manual, params["check_vma"]):
        discharged = discharge_state(body)
    ref_specs = [s for s, c in zip(params["in_specs"], is_cell, strict=True) if c]
    outs = shard_map_p.bind(
        *(x.value if c else x for x, c in zip(ins, is_cell, strict=True)),
        **dict(params, jaxpr=discharged, out_specs=(*params["out_specs"], *ref_specs)),
    )
    n = len(eqn.outvars)
    for cell, final in zip((x for x in ins if isinstance(x, Cell)), outs[n:], strict=True):
        cell.value = final
    return list(outs[:n])


def _distinct_cells(values: Sequence[Any]) -> list[Cell]:
    cells: list[Cell] = []
    for x in values:
        if isinstance(x, Cell) and all(x is not c for c in cells):
            cells.append(x)
    return cells


_CANNOT_HOLD_REFS = {
    scan_p: "a scan cannot carry or scan over Refs; close over them instead",
    while_p: "a while loop cannot carry Refs; close over them instead",
}


def _thread_refs(eqn: JaxprEqn, ins: list[Any]) -> list[Any]:
    """A loop or branch whose jaxprs use Refs it closes over: each Ref's value goes in at the
    head of the carry (of the operands, for a branch, which has no carry), and its final value
    comes out as a leading result of every held jaxpr giving the call's results."""
    layout = call_layouts[eqn.primitive]
    groups = layout.split(eqn.params, ins)
    for group, operands in zip(layout.groups, groups, strict=True):
        if group.role in (Role.CARRY, Role.XS) and any(isinstance(x, Cell) for x in operands):
            raise ValueError(_CANNOT_HOLD_REFS[eqn.primitive])
    cells = _distinct_cells(ins)
    kept = [[x for x in operands if not isinstance(x, Cell)] for operands in groups]
    home = next(
        (k for k, g in enumerate(layout.groups) if g.role is Role.CARRY),
        layout.callees[0].reads[0],
    )
    params = dict(eqn.params)
    for callee in layout.callees:
        before = callee.reads[: callee.reads.index(home)]
        restage = partial(
            _restage,
            operands=layout.inputs(callee, groups),
            cells=cells,
            at=sum(len(kept[k]) for k in before),
            returns=callee.returns,
        )
        params[callee.param] = map_callee(eqn.params[callee.param], restage)
    kept[home] = [*(c.value for c in cells), *kept[home]]
    params.update(layout.counts([len(operands) for operands in kept]))
    for name in layout.per_operand:
        if name in params:  # flags per operand (scan's `linear`): none is known linear now
            params[name] = (False,) * sum(len(operands) for operands in kept)
    outs = eqn.primitive.bind(*(x for operands in kept for x in operands), **params)
    n = len(cells)
    for c, v in zip(cells, outs[:n], strict=True):
        c.value = v
    return list(outs[n:])


def _restage(
    closed: ClosedJaxpr, operands: Sequence[Any], cells: Sequence[Cell], at: int, returns: bool
) -> ClosedJaxpr:
    """`closed`, called with `operands` of which some are `cells`, staged as a jaxpr of the
    other operands with the cells' values inserted at position `at`. If it `returns` the call's
    results, the cells' final values lead its outputs; if not, its writes are dropped (a
    read-only use, as a while's cond)."""
    slots = [next(k for k, c in enumerate(cells) if c is x) if isinstance(x, Cell) else None
             for x in operands]  # fmt: skip
    n = len(cells)

    def fun(*args: Any) -> list[Any]:
        local = [Cell(v) for v in args[at : at + n]]
        others = iter((*args[:at], *args[at + n :]))
        ins = [local[k] if k is not None else next(others) for k in slots]
        outs = interpret(closed.jaxpr, ins, closed.consts)
        return [*(c.value for c in local), *outs] if returns else outs

    others = [v.aval for k, v in zip(slots, closed.jaxpr.invars, strict=True) if k is None]
    avals = [*others[:at], *(typeof(c.value) for c in cells), *others[at:]]
    return trace_to_jaxpr(fun, avals, closed.jaxpr.debug_info)


def _scan(eqn: JaxprEqn, ins: list[Any]) -> list[Any]:
    """A scan over stacked Refs: as JAX does, an iteration counter and the values of all its
    Refs (closed over or scanned over) become carries; each iteration reads its slice of a
    scanned Ref's value and writes the slice back. Other scans thread their Refs as loops do."""
    params = eqn.params
    n_consts, n_carry = params["num_consts"], params["num_carry"]
    consts, carry, xs = _split(ins, (n_consts, n_carry))
    if not any(isinstance(x, Cell) for x in xs) or any(isinstance(x, Cell) for x in carry):
        return _thread_refs(eqn, ins)
    length, reverse = params["length"], params["reverse"]
    closed: ClosedJaxpr = params["jaxpr"]
    const_cells = _distinct_cells(consts)
    xs_cells = [x for x in xs if isinstance(x, Cell)]
    pure_consts = [x for x in consts if not isinstance(x, Cell)]
    pure_xs = [x for x in xs if not isinstance(x, Cell)]
    n_pc, n_cc, n_xc = len(pure_consts), len(const_cells), len(xs_cells)

    def body(*args: Any) -> list[Any]:
        pc, step, rest = args[:n_pc], args[n_pc], args[n_pc + 1 :]
        cv, cr, xv, px = _split(rest, (n_cc, n_carry, n_xc))
        i = length - step - 1 if reverse else step
        local = [Cell(v) for v in cv]
        slices = [Cell(dynamic_index_in_dim(v, i, 0, False, allow_negative_indices=False))
                  for v in xv]  # fmt: skip
        it_pc, it_sl, it_px = iter(pc), iter(slices), iter(px)
        body_consts = [
            local[next(k for k, c in enumerate(const_cells) if c is x)]
            if isinstance(x, Cell) else next(it_pc)
            for x in consts
        ]  # fmt: skip
        body_xs = [next(it_sl) if isinstance(x, Cell) else next(it_px) for x in xs]
        outs = interpret(closed.jaxpr, [*body_consts, *cr, *body_xs], closed.consts)
        written = [
            dynamic_update_index_in_dim(v, c.value, i, 0, allow_negative_indices=False)
            for v, c in zip(xv, slices, strict=True)
        ]
        return [step + 1, *(c.value for c in local), *outs[:n_carry], *written, *outs[n_carry:]]

    in_avals = [
        *(typeof(x) for x in pure_consts),
        typeof(0),
        *(typeof(c.value) for c in const_cells),
        *(typeof(x) for x in carry),
        *(typeof(c.value) for c in xs_cells),
        *(typeof(x).dec_rank(length, typeof(x).leading_axis_spec()) for x in pure_xs),
    ]
    new = trace_to_jaxpr(body, in_avals, closed.jaxpr.debug_info)
    outs = scan_p.bind(
        *pure_consts, 0, *(c.value for c in const_cells), *carry,
        *(c.value for c in xs_cells), *pure_xs,
        reverse=reverse, length=length, jaxpr=new, num_consts=n_pc,
        num_carry=1 + n_cc + n_carry + n_xc, unroll=params["unroll"],
    )  # fmt: skip
    finals = outs[1 : 1 + n_cc]
    rest = outs[1 + n_cc :]
    for c, v in zip(const_cells, finals, strict=True):
        c.value = v
    for c, v in zip(xs_cells, rest[n_carry : n_carry + n_xc], strict=True):
        c.value = v
    return [*rest[:n_carry], *rest[n_carry + n_xc :]]


def _split(values: Sequence[Any], sizes: Sequence[int]) -> list[Sequence[Any]]:
    """`values` cut into pieces of `sizes`, then the rest."""
    pieces, at = [], 0
    for n in sizes:
        pieces.append(values[at : at + n])
        at += n
    return [*pieces, values[at:]]


discharge_rules.set(scan_p, _scan)
for _call in (while_p, cond_p):
    discharge_rules.set(_call, _thread_refs)
