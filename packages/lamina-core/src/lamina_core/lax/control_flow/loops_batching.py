"""Batching of `scan` and `while`, as JAX's rules.

Both find by fixpoint which carries become mapped (a carry is mapped if its initial value is,
or if the body makes it so). A `scan` keeps mapped consts and carries at axis 0 and mapped
`xs`/`ys` at axis 1. A `while` whose predicate is unmapped maps its carries after the
predicate's rank; one whose predicate is mapped maps every carry at 0 and runs until every
lane is done, the lowering keeping each finished lane's values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lamina_core.interpreters import AxisData, BatchDim, batching_rules
from lamina_core.ir import ClosedJaxpr
from lamina_core.lax._batching_common import broadcast_batched, moveaxis
from lamina_core.lax.control_flow.loops import while_p
from lamina_core.lax.control_flow.scan import scan_p
from lamina_core.transforms import batch_jaxpr_axes, batch_jaxpr_front


def _scan_batch(
    axis_data: AxisData,
    vals: Sequence[Any],
    dims: Sequence[BatchDim],
    *,
    reverse: bool,
    length: int,
    jaxpr: ClosedJaxpr,
    num_consts: int,
    num_carry: int,
    unroll: int,
) -> tuple[list[Any], list[BatchDim]]:
    num_ys = len(jaxpr.out_avals) - num_carry
    batched = [d is not None for d in dims]
    head = num_consts + num_carry
    const_b, init_b, xs_b = batched[:num_consts], batched[num_consts:head], batched[head:]
    carry_b = list(init_b)
    for _ in range(1 + len(carry_b)):
        body, out_b = batch_jaxpr_front(
            jaxpr, axis_data, const_b + carry_b + xs_b, carry_b + [False] * num_ys
        )
        carry_out, ys_b = out_b[:num_carry], out_b[num_carry:]
        if carry_out == carry_b:
            break
        carry_b = [a or b for a, b in zip(carry_b, carry_out, strict=True)]
    else:
        raise AssertionError("scan batching: no fixpoint of the mapped carries")
    size = axis_data.size
    consts = [
        moveaxis(x, d, 0) if d is not None and d != 0 else x
        for x, d in zip(vals[:num_consts], dims[:num_consts], strict=True)
    ]
    init = [
        broadcast_batched(x, size, 0)
        if now and not was
        else moveaxis(x, d, 0)
        if now and d is not None
        else x
        for x, d, was, now in zip(
            vals[num_consts:head], dims[num_consts:head], init_b, carry_b, strict=True
        )
    ]
    xs = [
        moveaxis(x, d, 1) if d is not None and d != 1 else x
        for x, d in zip(vals[head:], dims[head:], strict=True)
    ]
    outs = scan_p.bind(
        *consts, *init, *xs, reverse=reverse, length=length, jaxpr=body,
        num_consts=num_consts, num_carry=num_carry, unroll=unroll,
    )  # fmt: skip
    return list(outs), [0 if b else None for b in carry_b] + [1 if b else None for b in ys_b]


batching_rules.set(scan_p, _scan_batch)


# --- while -------------------------------------------------------------------------------------


def _while_batch(
    axis_data: AxisData,
    vals: Sequence[Any],
    dims: Sequence[BatchDim],
    *,
    cond_jaxpr: ClosedJaxpr,
    body_jaxpr: ClosedJaxpr,
    cond_nconsts: int,
    body_nconsts: int,
) -> tuple[list[Any], list[BatchDim]]:
    nc, nb = cond_nconsts, body_nconsts
    batched = [d is not None for d in dims]
    cconst_b, bconst_b, init_b = batched[:nc], batched[nc : nc + nb], batched[nc + nb :]
    cconst_d, bconst_d, init_d = list(dims[:nc]), list(dims[nc : nc + nb]), list(dims[nc + nb :])
    carry_b = list(init_b)
    for _ in range(1 + len(carry_b)):
        _, out_b = batch_jaxpr_front(body_jaxpr, axis_data, bconst_b + carry_b, carry_b)
        if out_b == carry_b:
            break
        carry_b = [a or b for a, b in zip(carry_b, out_b, strict=True)]
    else:
        raise AssertionError("while batching: no fixpoint of the mapped carries")
    _, (pred_b,) = batch_jaxpr_front(cond_jaxpr, axis_data, cconst_b + carry_b, [False])
    carry_d: list[BatchDim]
    if pred_b:
        # A mapped predicate maps every carry: lanes that are done keep their values.
        carry_d = [0] * len(carry_b)
        body = batch_jaxpr_axes(body_jaxpr, axis_data, tuple(bconst_d + carry_d), tuple(carry_d))
        cond = batch_jaxpr_axes(cond_jaxpr, axis_data, tuple(cconst_d + carry_d), (0,))
    else:
        rank = len(cond_jaxpr.out_avals[0].shape)  # type: ignore[attr-defined]  # bool array
        carry_d = [rank if b else None for b in carry_b]
        body = batch_jaxpr_axes(body_jaxpr, axis_data, tuple(bconst_d + carry_d), tuple(carry_d))
        cond = batch_jaxpr_axes(cond_jaxpr, axis_data, tuple(cconst_d + carry_d), (None,))
    size = axis_data.size
    init = []
    for x, old, new in zip(vals[nc + nb :], init_d, carry_d, strict=True):
        if old is None and new is not None:
            init.append(broadcast_batched(x, size, new))
        elif old is None:
            init.append(x)
        else:
            assert new is not None
            init.append(moveaxis(x, old, new))
    outs = while_p.bind(
        *vals[: nc + nb], *init, cond_nconsts=nc, cond_jaxpr=cond, body_nconsts=nb,
        body_jaxpr=body,
    )  # fmt: skip
    return list(outs), carry_d


batching_rules.set(while_p, _while_batch)
