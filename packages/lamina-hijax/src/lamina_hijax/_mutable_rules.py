"""Calls and control flow applied to boxes (values of mutable hi types): how their staging
updates the boxes' data (`qdd_final_rules`), and how they lower (`mutable_lowering_rules`)
once the program of boxes is run on Python boxes of arrays (`lower_mutable`).

As JAX's rules: a box a loop body closes over is carried by the lowered loop (its arrays in,
its final arrays out, written back after); a box a branch of `cond` takes is an operand of
every lowered branch, which return its final arrays (all branches leaving it the same type).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lamina_core.interpreters import trace_to_jaxpr
from lamina_core.ir import (
    AbstractValue,
    ClosedJaxpr,
    Jaxpr,
    Primitive,
    qdd_final_rules,
    types_match,
)
from lamina_core.lax import cond_p, scan_p, while_p
from lamina_core.trace import eval_jaxpr
from lamina_core.transforms import jit_p
from lamina_hijax._mutable import (
    LoVals,
    lower_mutable,
    mutable_lowering_rules,
    run_eqns,
)


def _finals(jaxpr: Jaxpr, offset: int, n: int) -> list[Any]:
    return [None] * offset + [v.final_qdd for v in jaxpr.invars][:n]


def _callee_finals(params: dict[str, Any], n: int) -> list[Any]:
    return _finals(params["jaxpr"].jaxpr, 0, n)


def _while_finals(params: dict[str, Any], n: int) -> list[Any]:
    return _finals(params["body_jaxpr"].jaxpr, params["cond_nconsts"], n)


def _cond_finals(params: dict[str, Any], n: int) -> list[Any]:
    return _finals(params["branches"][0].jaxpr, 1, n)


for _prim in (jit_p, scan_p):
    qdd_final_rules[_prim] = _callee_finals
qdd_final_rules[while_p] = _while_finals
qdd_final_rules[cond_p] = _cond_finals


def _jit_rule(params: dict[str, Any], ins: list[Any]) -> list[Any]:
    # The callee's equations, applied to the caller's boxes in place.
    closed: ClosedJaxpr = params["jaxpr"]
    env = dict(zip(closed.jaxpr.invars, ins, strict=True))
    env.update(zip(closed.jaxpr.constvars, closed.consts, strict=True))
    return run_eqns(closed.jaxpr, env)


def _in_lo(v: Any, x: Any) -> list[Any]:
    if not v.aval.has_qdd:
        return [x]
    read = getattr(v.aval, "read_loval_in", None) or v.aval.read_loval
    return list(read(v.initial_qdd, x))


def _lo_sizes(jaxpr: Jaxpr) -> list[int]:
    return [
        len(v.aval.lo_ty_qdd(v.initial_qdd)) if v.aval.has_qdd else 1  # type: ignore[attr-defined]  # a MutableHiType
        for v in jaxpr.invars
    ]


def _split(xs: Sequence[Any], sizes: Sequence[int]) -> list[list[Any]]:
    it = iter(xs)
    return [[next(it) for _ in range(n)] for n in sizes]


def _write(jaxpr: Jaxpr, which: Sequence[int], ins: Sequence[Any], trees: Sequence[Any],
           finals: Sequence[Any]) -> None:  # fmt: skip
    it = iter(finals)
    for i, tree in zip(which, trees, strict=True):
        v = jaxpr.invars[i]
        lo = LoVals(tuple(next(it) for _ in range(tree.num_leaves)), tree)
        v.aval.update_from_loval2(v.final_qdd, ins[i], lo)  # type: ignore[attr-defined]  # a MutableHiType


def _carried_body(
    lowered: ClosedJaxpr,
    sizes: Sequence[int],
    order: Sequence[int],
    out_order: Sequence[int] | None = None,
) -> ClosedJaxpr:
    """`lowered` taking its inputs' arrays in `order` (boxes moved among the carry), and
    returning its outputs in `out_order` (positions; all in place when None)."""
    groups = _split(lowered.in_avals, sizes)

    def body(*flat: Any) -> list[Any]:
        by_input = dict(zip(order, _split(flat, [sizes[i] for i in order]), strict=True))
        outs = eval_jaxpr(lowered, (), *[x for i in range(len(sizes)) for x in by_input[i]])
        return outs if out_order is None else [outs[k] for k in out_order]

    avals: list[AbstractValue] = [a for i in order for a in groups[i]]
    return trace_to_jaxpr(body, avals)


def _check_kept(finals: Sequence[Any], mut_avals: Sequence[Any], what: str) -> None:
    if len(finals) != len(mut_avals) or not all(map(types_match, finals, mut_avals)):
        raise TypeError(f"type-changing mutations not allowed in {what}")


def _scan_rule(params: dict[str, Any], ins: list[Any]) -> list[Any]:
    # Boxes the body closes over are carried; writers (logs) stay consts, and what the body
    # writes to them each iteration is stacked as extra outputs (JAX's `_scan_to_lojax`).
    closed: ClosedJaxpr = params["jaxpr"]
    jaxpr, nc, nk = closed.jaxpr, params["num_consts"], params["num_carry"]
    mut = [v.aval.has_qdd for v in jaxpr.invars]
    if any(mut[nc:]):
        raise NotImplementedError("Lamina lowers scans of boxes they close over only")
    lowered, tree_list = lower_mutable(closed)
    sizes = _lo_sizes(jaxpr)
    boxes = [i for i in range(nc) if mut[i]]
    trees = dict(zip(boxes, tree_list, strict=True))
    writers = [i for i in boxes if jaxpr.invars[i].aval.is_writer]  # type: ignore[attr-defined]  # a MutableHiType
    carried = [i for i in boxes if i not in writers]
    consts = [i for i in range(nc) if not mut[i] or i in writers]
    order = [*consts, *carried, *range(nc, len(sizes))]
    # The lowered body's outputs: each box's final arrays (in input order), then its own.
    start, positions = 0, {}
    for i in boxes:
        positions[i] = list(range(start, start + trees[i].num_leaves))
        start += trees[i].num_leaves
    own = list(range(start, len(lowered.out_avals)))
    out_order = [
        *(k for i in carried for k in positions[i]),
        *own,
        *(k for i in writers for k in positions[i]),
    ]
    n_car = sum(trees[i].num_leaves for i in carried)
    in_groups = _split(lowered.in_avals, sizes)
    finals = [lowered.out_avals[k] for k in out_order[:n_car]]
    _check_kept(finals, [a for i in carried for a in in_groups[i]], "scan body")
    args = [x for i in order for x in _in_lo(jaxpr.invars[i], ins[i])]
    outs = scan_p.bind(
        *args,
        reverse=params["reverse"],
        length=params["length"],
        jaxpr=_carried_body(lowered, sizes, order, out_order),
        num_consts=sum(sizes[i] for i in consts),
        num_carry=sum(sizes[i] for i in carried) + sum(sizes[nc : nc + nk]),
        unroll=params["unroll"],
    )
    n_wr = sum(trees[i].num_leaves for i in writers)
    _write(jaxpr, carried, ins, [trees[i] for i in carried], outs[:n_car])
    _write(jaxpr, writers, ins, [trees[i] for i in writers], outs[len(outs) - n_wr :])
    return list(outs[n_car : len(outs) - n_wr])


def _while_rule(params: dict[str, Any], ins: list[Any]) -> list[Any]:
    cond: ClosedJaxpr = params["cond_jaxpr"]
    body: ClosedJaxpr = params["body_jaxpr"]
    ncc, nbc = params["cond_nconsts"], params["body_nconsts"]
    if any(v.aval.has_qdd for v in cond.jaxpr.invars):
        raise NotImplementedError("Lamina lowers while loops whose condition reads no box")
    jaxpr = body.jaxpr
    mut = [v.aval.has_qdd for v in jaxpr.invars]
    lowered, trees = lower_mutable(body)
    sizes = _lo_sizes(jaxpr)
    imm = [i for i in range(nbc) if not mut[i]]
    boxes = [i for i in range(len(mut)) if mut[i]]
    if any(i >= nbc for i in boxes):
        raise NotImplementedError("Lamina lowers while loops of boxes their body closes over")
    order = [*imm, *boxes, *range(nbc, len(sizes))]
    n_mut = sum(sizes[i] for i in boxes)
    body_ins = ins[ncc:]
    in_groups = _split(lowered.in_avals, sizes)
    mut_avals = [a for i in boxes for a in in_groups[i]]
    _check_kept(lowered.out_avals[:n_mut], mut_avals, "while_loop body")

    def cond_fun(*flat: Any) -> list[Any]:
        consts, rest = flat[:ncc], flat[ncc + n_mut :]
        return eval_jaxpr(cond, (), *consts, *rest)

    cond_avals = [*cond.in_avals[:ncc], *mut_avals, *cond.in_avals[ncc:]]
    lo_cond = trace_to_jaxpr(cond_fun, cond_avals)
    body_args = [x for i in order for x in _in_lo(jaxpr.invars[i], body_ins[i])]
    n_imm = sum(sizes[i] for i in imm)
    outs = while_p.bind(
        *ins[:ncc],
        *body_args,
        cond_nconsts=ncc,
        cond_jaxpr=lo_cond,
        body_nconsts=n_imm,
        body_jaxpr=_carried_body(lowered, sizes, order),
    )
    _write(jaxpr, boxes, body_ins, trees, outs[:n_mut])
    return list(outs[n_mut:])


def _cond_rule(params: dict[str, Any], ins: list[Any]) -> list[Any]:
    branches: tuple[ClosedJaxpr, ...] = params["branches"]
    index, ops = ins[0], ins[1:]
    first = branches[0].jaxpr
    boxes = [i for i, v in enumerate(first.invars) if v.aval.has_qdd]
    lowered = [lower_mutable(b) for b in branches]
    trees = lowered[0][1]
    n_mut = sum(t.num_leaves for t in trees)
    finals = lowered[0][0].out_avals[:n_mut]
    if any(lo.out_avals[:n_mut] != finals or t != trees for lo, t in lowered[1:]):
        raise TypeError("type-changing mutations not allowed in cond branches")
    args = [x for v, op in zip(first.invars, ops, strict=True) for x in _in_lo(v, op)]
    outs = cond_p.bind(index, *args, branches=tuple(lo for lo, _ in lowered))
    _write(first, boxes, ops, trees, outs[:n_mut])
    return list(outs[n_mut:])


_RULES: dict[Primitive, Any] = {
    jit_p: _jit_rule,
    scan_p: _scan_rule,
    while_p: _while_rule,
    cond_p: _cond_rule,
}
mutable_lowering_rules.update(_RULES)
