"""Lowering of the generic and windowed reductions and of max/min pooling's derivatives.

`reduce` is `stablehlo.reduce` and the window reductions `stablehlo.reduce_window`, with the
traced computation (or the monoid's one op) as the body; the monoid ones take their identity
as a broadcast scalar init, as JAX emits it. `select_and_scatter` is `stablehlo.
select_and_scatter` with the traced select and scatter bodies. The two pooling-derivative
primitives lower as JAX does on CPU, through their definitions in other primitives:
`select_and_gather_add` as a variadic `reduce_window` of (operand, tangent) pairs, and
`select_and_scatter_add` as a `select_and_scatter` of the operand padded explicitly with the
selection's identity, cropped back after.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir

from lamina_core import lax
from lamina_core.interpreters import trace_to_jaxpr
from lamina_core.ir import ClosedJaxpr, Jaxpr, Primitive
from lamina_core.lax import (
    select_and_gather_add_p,
    select_and_gather_add_variadic,
    select_and_scatter_add_expanded,
    select_and_scatter_add_p,
)
from lamina_mlir import _hlo
from lamina_mlir._constants import ir_constant
from lamina_mlir._context import NO_TOKENS, LoweringRuleContext
from lamina_mlir._ir_types import tensor_type
from lamina_mlir._lower import jaxpr_subcomp
from lamina_mlir._mlir_context import ContextCaches, IrValue
from lamina_mlir._rules_reductions import max_identity, min_identity
from lamina_mlir._rules_util import array_aval, register

Padding = Sequence[tuple[int, int]]


def _body(
    ctx: LoweringRuleContext,
    block: ir.Block,
    jaxpr: Jaxpr,
    consts: Sequence[Any],
    name_stack: str,
) -> None:
    """Lower `jaxpr` (with its `consts`) over `block`'s arguments and return its outputs."""
    if jaxpr.effects:
        raise NotImplementedError("Cannot lower an effectful reduction computation.")
    const_values = [
        ir_constant(ctx.caches, c, v.aval, ctx.const_lowering)
        for c, v in zip(consts, jaxpr.constvars, strict=True)
    ]
    with ir.InsertionPoint(block):
        outs, _ = jaxpr_subcomp(
            ctx.module_context,
            jaxpr,
            name_stack,
            NO_TOKENS,
            const_values,
            *block.arguments,
            const_lowering=ctx.const_lowering,
        )
        _hlo.return_(outs)


def _scalar_types(ctx: LoweringRuleContext, avals: Sequence[Any]) -> list[ir.Type]:
    return [ctx.module_context.ir_type(a) for a in avals]


@register(lax.reduce_p)
def _reduce_lowering(
    ctx: LoweringRuleContext,
    *args: IrValue,
    computation: Any,
    jaxpr: ClosedJaxpr,
    dimensions: Sequence[int],
) -> list[IrValue]:
    n = len(args) // 2
    op = _hlo.emit(
        "stablehlo.reduce",
        _scalar_types(ctx, ctx.avals_out),
        args,
        {"dimensions": _hlo.dense_i64_array(ctx.caches, dimensions)},
        regions=1,
    )
    scalars = _scalar_types(ctx, ctx.avals_in[n:])
    block = op.regions[0].blocks.append(*scalars, *scalars)
    # The reducer's ops are named from a fresh name stack, as JAX names them.
    _body(ctx, block, jaxpr.jaxpr, jaxpr.consts, "")
    return list(op.results)


def _window_attrs(
    caches: ContextCaches,
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Padding,
    base_dilation: Sequence[int],
    window_dilation: Sequence[int],
) -> dict[str, ir.Attribute]:
    pads = np.asarray(padding, np.int64).reshape(len(padding), 2)
    return {
        "window_dimensions": _hlo.dense_i64_array(caches, window_dimensions),
        "window_strides": _hlo.dense_i64_array(caches, window_strides),
        "base_dilations": _hlo.dense_i64_array(caches, base_dilation),
        "window_dilations": _hlo.dense_i64_array(caches, window_dilation),
        "padding": _hlo.dense_elements(caches, pads),
    }


def _reduce_window_op(
    ctx: LoweringRuleContext, operands: Sequence[IrValue], inits: Sequence[IrValue], **window: Any
) -> ir.Operation:
    return _hlo.emit(
        "stablehlo.reduce_window",
        _scalar_types(ctx, ctx.avals_out),
        [*operands, *inits],
        _window_attrs(ctx.caches, **window),
        regions=1,
    )


@register(lax.reduce_window_p)
def _reduce_window_lowering(
    ctx: LoweringRuleContext, *args: IrValue, jaxpr: Jaxpr, consts: Sequence[Any], **window: Any
) -> list[IrValue]:
    n = len(args) // 2
    op = _reduce_window_op(ctx, args[:n], args[n:], **window)
    scalars = _scalar_types(ctx, ctx.avals_in[n:])
    block = op.regions[0].blocks.append(*scalars, *scalars)
    _body(ctx, block, jaxpr, consts, ctx.name_stack)
    return list(op.results)


Combine = Callable[[ContextCaches, IrValue, IrValue], IrValue]


def _add(caches: ContextCaches, x: IrValue, y: IrValue) -> IrValue:
    return _hlo.emit1("stablehlo.add", x.type, x, y)


def _min_max(name: str) -> Combine:
    def combine(caches: ContextCaches, x: IrValue, y: IrValue) -> IrValue:
        return _hlo.min_or_max(caches, name, x, y)

    return combine


def _monoid_window_rule(combine: Combine, identity: Callable[[np.dtype], Any]) -> Any:
    def rule(ctx: LoweringRuleContext, x: IrValue, **window: Any) -> list[IrValue]:
        caches = ctx.caches
        dtype = array_aval(ctx.avals_in[0]).dtype
        init = _hlo.scalar_constant(caches, identity(dtype), dtype)
        # JAX builds the init as a full scalar: a rank-0 broadcast of the constant.
        init = _hlo.broadcast_in_dim(caches, init, (), dtype, ())
        op = _reduce_window_op(ctx, [x], [init], **window)
        block = op.regions[0].blocks.append(init.type, init.type)
        with ir.InsertionPoint(block):
            _hlo.return_([combine(caches, *block.arguments)])
        return [op.result]

    return rule


_MONOIDS: dict[Primitive, tuple[Combine, Callable[[np.dtype], Any]]] = {
    lax.reduce_window_sum_p: (_add, lambda d: np.array(0).astype(d)),
    lax.reduce_window_max_p: (_min_max("stablehlo.maximum"), max_identity),
    lax.reduce_window_min_p: (_min_max("stablehlo.minimum"), min_identity),
}

for _prim, (_combine, _identity) in _MONOIDS.items():
    register(_prim)(_monoid_window_rule(_combine, _identity))


@register(lax.select_and_scatter_p)
def _select_and_scatter_lowering(
    ctx: LoweringRuleContext,
    operand: IrValue,
    source: IrValue,
    init_value: IrValue,
    *,
    select_jaxpr: Jaxpr,
    select_consts: Sequence[Any],
    scatter_jaxpr: Jaxpr,
    scatter_consts: Sequence[Any],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Padding,
) -> list[IrValue]:
    caches = ctx.caches
    aval = array_aval(ctx.avals_in[0])
    pads = np.asarray(padding, np.int64).reshape(len(padding), 2)
    attrs = {
        "window_dimensions": _hlo.dense_i64_array(caches, window_dimensions),
        "window_strides": _hlo.dense_i64_array(caches, window_strides),
        "padding": _hlo.dense_elements(caches, pads),
    }
    op = _hlo.emit(
        "stablehlo.select_and_scatter",
        _scalar_types(ctx, ctx.avals_out),
        [operand, source, init_value],
        attrs,
        regions=2,
    )
    scalar = tensor_type(caches, (), aval.dtype)
    select = op.regions[0].blocks.append(scalar, scalar)
    _body(ctx, select, select_jaxpr, select_consts, ctx.name_stack)
    scatter = op.regions[1].blocks.append(scalar, scalar)
    _body(ctx, scatter, scatter_jaxpr, scatter_consts, ctx.name_stack)
    return list(op.results)


def _lower_traced(
    ctx: LoweringRuleContext, fun: Callable[..., Any], args: Sequence[IrValue]
) -> list[IrValue]:
    """Trace `fun` over the equation's input types and lower its jaxpr here, in place."""
    closed = trace_to_jaxpr(lambda *xs: [fun(*xs)], ctx.avals_in)
    const_values = [
        ir_constant(ctx.caches, c, v.aval, ctx.const_lowering)
        for c, v in zip(closed.consts, closed.jaxpr.constvars, strict=True)
    ]
    outs, _ = jaxpr_subcomp(
        ctx.module_context,
        closed.jaxpr,
        ctx.name_stack,
        NO_TOKENS,
        const_values,
        *args,
        const_lowering=ctx.const_lowering,
    )
    return outs


@register(select_and_scatter_add_p)
def _select_and_scatter_add_lowering(
    ctx: LoweringRuleContext, source: IrValue, operand: IrValue, **params: Any
) -> list[IrValue]:
    def expanded(s: Any, o: Any) -> Any:
        return select_and_scatter_add_expanded(s, o, **params)

    return _lower_traced(ctx, expanded, [source, operand])


@register(select_and_gather_add_p)
def _select_and_gather_add_lowering(
    ctx: LoweringRuleContext, tangents: IrValue, operand: IrValue, **params: Any
) -> list[IrValue]:
    def variadic(t: Any, o: Any) -> Any:
        return select_and_gather_add_variadic(t, o, **params)

    return _lower_traced(ctx, variadic, [tangents, operand])
