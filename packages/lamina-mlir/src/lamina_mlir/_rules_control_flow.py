"""Lowering of the control-flow primitives: `cond` to `stablehlo.case`, `while` to
`stablehlo.while`, and `scan` to a `while` over a step counter, as JAX lowers them.

Branch and loop bodies are lowered in place with `jaxpr_subcomp` and the enclosing function's
`const_lowering`, so a constant a body closes over is the enclosing function's const argument
(seed 000), never a new `stablehlo.constant`. Ordered effects travel as tokens: through the
case's results, and as leading loop-carried values of the while.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir

from lamina_core import dtypes, lax
from lamina_core.interpreters import trace_to_jaxpr
from lamina_core.ir import ClosedJaxpr, NamedSharding, PartitionSpec, ShapedArray
from lamina_core.lax import cond_p, scan_p, while_loop, while_p
from lamina_core.transforms import closed_call_p
from lamina_mlir import _hlo
from lamina_mlir._constants import ir_constant
from lamina_mlir._context import NO_TOKENS, LoweringRuleContext, TokenSet, ordered_effects
from lamina_mlir._lower import jaxpr_subcomp
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._rules_util import register


def _consts(ctx: LoweringRuleContext, closed: ClosedJaxpr) -> list[IrValue]:
    return [
        ir_constant(ctx.caches, c, v.aval, ctx.const_lowering)
        for c, v in zip(closed.consts, closed.jaxpr.constvars, strict=True)
    ]


def _stack(ctx: LoweringRuleContext, name: str) -> str:
    return f"{ctx.name_stack}/{name}" if ctx.name_stack else name


@register(cond_p)
def _cond_lowering(
    ctx: LoweringRuleContext, index: IrValue, *args: IrValue, branches: tuple[ClosedJaxpr, ...]
) -> list[IrValue]:
    mctx = ctx.module_context
    effects = ordered_effects(frozenset().union(*(b.effects for b in branches)))
    tokens_in = [ctx.tokens_in.get(e) for e in effects]
    out_types = [*(t.type for t in tokens_in), *(mctx.ir_type(a) for a in ctx.avals_out)]
    op = _hlo.emit("stablehlo.case", out_types, [index], regions=len(branches))
    name_stack = _stack(ctx, "cond")
    for i, (region, branch) in enumerate(zip(op.regions, branches, strict=True)):
        block = region.blocks.append()
        with ir.InsertionPoint(block):
            outs, tokens = jaxpr_subcomp(
                mctx,
                branch.jaxpr,
                f"{name_stack}/branch_{i}_fun",
                TokenSet(tuple(zip(effects, tokens_in, strict=True))),
                _consts(ctx, branch),
                *args,
                const_lowering=ctx.const_lowering,
            )
            _hlo.return_([*(tokens.get(e) for e in effects), *outs])
    results: list[IrValue] = list(op.results)
    if effects:
        ctx.set_tokens_out(ctx.tokens_in.update(dict(zip(effects, results, strict=False))))
    return results[len(effects) :]


def _reduce_or(ctx: LoweringRuleContext, pred: IrValue, aval: ShapedArray) -> IrValue:
    caches = ctx.caches
    scalar = ir.RankedTensorType.get([], ir.IntegerType.get_signless(1))
    init = _hlo.scalar_constant(caches, False, np.dtype(np.bool_))
    op = _hlo.emit(
        "stablehlo.reduce",
        [scalar],
        [pred, init],
        {"dimensions": _hlo.dense_i64_array(caches, tuple(range(aval.ndim)))},
        regions=1,
    )
    body = op.regions[0].blocks.append(init.type, init.type)
    with ir.InsertionPoint(body):
        _hlo.return_([_hlo.emit1("stablehlo.or", init.type, *body.arguments)])
    return op.result


def _select_batched(
    ctx: LoweringRuleContext, pred: IrValue, pred_aval: ShapedArray, new: IrValue, old: IrValue,
    aval: Any,
) -> IrValue:  # fmt: skip
    # A key array's value is its physical data: the predicate covers its trailing axes too.
    ext = dtypes.extended_dtype_of(aval.dtype)
    shape = (*aval.shape, *(ext.physical_shape if ext is not None else ()))
    if tuple(shape) != tuple(pred_aval.shape):
        pred_type = ir.RankedTensorType.get(list(shape), ir.IntegerType.get_signless(1))
        pred = _hlo.emit1(
            "stablehlo.broadcast_in_dim",
            pred_type,
            pred,
            attributes={
                "broadcast_dimensions": _hlo.dense_i64_array(
                    ctx.caches, tuple(range(pred_aval.ndim))
                )
            },
        )
    return _hlo.select(pred, new, old)


@register(while_p)
def _while_lowering(
    ctx: LoweringRuleContext,
    *args: IrValue,
    cond_jaxpr: ClosedJaxpr,
    body_jaxpr: ClosedJaxpr,
    cond_nconsts: int,
    body_nconsts: int,
) -> list[IrValue]:
    mctx = ctx.module_context
    pred_aval = cond_jaxpr.out_avals[0]
    assert isinstance(pred_aval, ShapedArray)
    batched = bool(pred_aval.shape)
    effects = ordered_effects(body_jaxpr.effects)
    tokens = [ctx.tokens_in.get(e) for e in effects]
    carry_types = [*(t.type for t in tokens), *(mctx.ir_type(a) for a in ctx.avals_in)]
    op = _hlo.emit("stablehlo.while", carry_types, [*tokens, *args], regions=2)
    name_stack = _stack(ctx, "while")
    n_tok = len(effects)

    def split(values: Sequence[IrValue]) -> tuple[list[IrValue], list[IrValue], list[IrValue]]:
        rest = list(values[n_tok:])
        return (
            rest[:cond_nconsts],
            rest[cond_nconsts : cond_nconsts + body_nconsts],
            rest[cond_nconsts + body_nconsts :],
        )

    cond_block = op.regions[0].blocks.append(*carry_types)
    with ir.InsertionPoint(cond_block):
        x, _, z = split(list(cond_block.arguments))
        (pred,), _ = jaxpr_subcomp(
            mctx, cond_jaxpr.jaxpr, f"{name_stack}/cond", NO_TOKENS, _consts(ctx, cond_jaxpr),
            *x, *z, const_lowering=ctx.const_lowering,
        )  # fmt: skip
        if batched:
            pred = _reduce_or(ctx, pred, pred_aval)
        _hlo.return_([pred])
    body_block = op.regions[1].blocks.append(*carry_types)
    with ir.InsertionPoint(body_block):
        arguments = list(body_block.arguments)
        x, y, z = split(arguments)
        tokens_in = TokenSet(tuple(zip(effects, arguments[:n_tok], strict=True)))
        new_z, tokens_out = jaxpr_subcomp(
            mctx, body_jaxpr.jaxpr, f"{name_stack}/body", tokens_in, _consts(ctx, body_jaxpr),
            *y, *z, const_lowering=ctx.const_lowering,
        )  # fmt: skip
        if batched:
            (body_pred,), _ = jaxpr_subcomp(
                mctx, cond_jaxpr.jaxpr, f"{name_stack}/body_pred", NO_TOKENS,
                _consts(ctx, cond_jaxpr), *x, *z, const_lowering=ctx.const_lowering,
            )  # fmt: skip
            new_z = [
                _select_batched(ctx, body_pred, pred_aval, n, o, a)
                for n, o, a in zip(new_z, z, body_jaxpr.out_avals, strict=True)
            ]
        _hlo.return_([*(tokens_out.get(e) for e in effects), *x, *y, *new_z])
    results: list[IrValue] = list(op.results)
    if effects:
        ctx.set_tokens_out(ctx.tokens_in.update(dict(zip(effects, results, strict=False))))
    return results[n_tok + cond_nconsts + body_nconsts :]


def _scan_as_loops(
    *args: Any,
    reverse: bool,
    length: int,
    jaxpr: ClosedJaxpr,
    num_consts: int,
    num_carry: int,
    unroll: int,
) -> list[Any]:
    """The scan as `while` loops over slices of `xs` (JAX's `_scan_impl`), traced here so the
    lowering is the lowering of ordinary primitives."""
    consts = list(args[:num_consts])
    carry = list(args[num_consts : num_consts + num_carry])
    xs = list(args[num_consts + num_carry :])
    y_avals = jaxpr.out_avals[num_carry:]
    if unroll == 0:
        trips, remainder = 0, length
    else:
        trips, remainder = divmod(length, unroll)
    if unroll != 1 and trips == 1 and remainder == 0:
        trips, remainder = 0, length
    step = 1 if unroll == 0 else unroll

    def body_steps(n: int, carry: list[Any], x_blocks: list[Any]) -> tuple[list[Any], list[Any]]:
        ys: list[list[Any]] = []
        for k in range(n):
            i = n - k - 1 if reverse else k
            x = [lax.index_in_dim(b, i, keepdims=False) for b in x_blocks]
            outs = closed_call_p.bind(*consts, *carry, *x, call_jaxpr=jaxpr)
            carry = list(outs[:num_carry])
            ys.append(list(outs[num_carry:]))
        if reverse:
            ys.reverse()
        columns = zip(*ys, strict=True)
        stacked = [lax.concatenate([lax.expand_dims(y, (0,)) for y in col], 0) for col in columns]
        return carry, stacked

    def empty(lead: tuple[int, ...], aval: Any) -> Any:
        # JAX allocates with `empty2`, which lowers to zeros; zeros it is. Over Explicit
        # axes the buffer is split as the values stacked in it.
        shape = (*lead, *aval.shape)
        sharding = None
        if aval.mesh is not None and aval.mesh.has_explicit:
            spec = (*(None,) * len(lead), *(aval.spec or (None,) * aval.ndim))
            sharding = NamedSharding(aval.mesh, PartitionSpec(*spec))
        return lax.broadcast(np.zeros((), aval.dtype), shape, out_sharding=sharding)

    main_xs = xs
    rem_xs: list[Any] = []
    if remainder and trips:
        cut = trips * step
        if not reverse:
            main_xs = [lax.slice_in_dim(x, 0, cut) for x in xs]
            rem_xs = [lax.slice_in_dim(x, cut, length) for x in xs]
        else:
            rem_xs = [lax.slice_in_dim(x, 0, remainder) for x in xs]
            main_xs = [lax.slice_in_dim(x, remainder, length) for x in xs]
    elif remainder:
        rem_xs = xs
    ys: list[Any] = []
    if trips:
        if step == 1:
            blocks = main_xs
            buffers = [empty((length,), a) for a in y_avals]
        else:
            blocks = [lax.reshape(x, (trips, step, *x.shape[1:])) for x in main_xs]
            buffers = [empty((trips, step), a) for a in y_avals]

        def loop_body(state: Any) -> Any:
            i, c, bufs = state
            j = trips - i - 1 if reverse else i
            if step == 1:
                x = [
                    lax.dynamic_index_in_dim(b, j, keepdims=False, allow_negative_indices=False)
                    for b in blocks
                ]
                outs = closed_call_p.bind(*consts, *c, *x, call_jaxpr=jaxpr)
                c, y = list(outs[:num_carry]), list(outs[num_carry:])
            else:
                x_blocks = [
                    lax.dynamic_index_in_dim(b, j, keepdims=False, allow_negative_indices=False)
                    for b in blocks
                ]
                c, y = body_steps(step, list(c), x_blocks)
            bufs = [
                lax.dynamic_update_index_in_dim(b, u, j, 0, allow_negative_indices=False)
                for b, u in zip(bufs, y, strict=True)
            ]
            return i + 1, c, bufs

        _, carry, ys = while_loop(lambda s: s[0] < trips, loop_body, (np.int32(0), carry, buffers))
        if step != 1:
            ys = [lax.reshape(y, (trips * step, *y.shape[2:])) for y in ys]
    if remainder:
        carry, ys_rem = body_steps(remainder, carry, rem_xs)
        if not trips:
            ys = ys_rem
        elif not reverse:
            ys = [lax.concatenate([a, b], 0) for a, b in zip(ys, ys_rem, strict=True)]
        else:
            ys = [lax.concatenate([b, a], 0) for a, b in zip(ys, ys_rem, strict=True)]
    if not trips and not remainder:
        ys = [empty((0,), a) for a in y_avals]
    return [*carry, *ys]


@register(scan_p)
def _scan_lowering(ctx: LoweringRuleContext, *args: IrValue, **params: Any) -> list[IrValue]:
    closed = trace_to_jaxpr(lambda *xs: _scan_as_loops(*xs, **params), ctx.avals_in)
    outs, tokens = jaxpr_subcomp(
        ctx.module_context,
        closed.jaxpr,
        ctx.name_stack,
        ctx.tokens_in,
        _consts(ctx, closed),
        *args,
        const_lowering=ctx.const_lowering,
    )
    if len(tokens):
        ctx.set_tokens_out(tokens)
    return outs
