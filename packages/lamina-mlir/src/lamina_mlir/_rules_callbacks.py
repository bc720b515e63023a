"""Lowering of host callbacks (`pure_callback`, `io_callback`, `debug_callback`, `debug_print`).

Each becomes the CPU FFI `custom_call @xla_ffi_python_cpu_callback`, as JAX 0.10.2 emits it:
its backend config names, by `index`, a Python function in the module context's
`host_callbacks` list, which the runtime hands to the compiler. The function takes NumPy
arrays and returns a tuple of them. Effectful callbacks are `has_side_effect`.

Inside a `shard_map` manual over every mesh axis, each device runs the callback on its own
shard: the call is annotated as replicated over the empty mesh `@empty_mesh`, as JAX does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy
from jaxlib.mlir.dialects import stablehlo as hlo

from lamina_core.callbacks import (
    FlatCallback,
    OrderedDebugEffect,
    OrderedIOEffect,
    call_checked,
    check_p,
    debug_callback_p,
    debug_effect,
    debug_print_p,
    functionalization_error,
    io_callback_p,
    io_effect,
    ordered_debug_effect,
    ordered_io_effect,
    print_callback,
    pure_callback_p,
)
from lamina_core.ir import AbstractValue, Effect, ShapedArray
from lamina_core.lax import abstract_token
from lamina_mlir._context import (
    LoweringRuleContext,
    ordered_effect_types,
    shardable_ordered_effect_types,
)
from lamina_mlir._mlir_context import IrValue
from lamina_mlir._rules_shard_map import spmd_context
from lamina_mlir._rules_util import register

TARGET = "xla_ffi_python_cpu_callback"
_MAXIMAL = "maximal_mesh_0"
_EMPTY = "empty_mesh"

ordered_effect_types.update({OrderedIOEffect, OrderedDebugEffect})
shardable_ordered_effect_types.add(OrderedIOEffect)


def _layout(caches: Any, aval: AbstractValue) -> ir.Attribute:
    """Row-major, as minor-to-major dimension numbers (a dense `index` tensor)."""
    ndim = len(aval.shape) if isinstance(aval, ShapedArray) else 0
    order = np.arange(ndim - 1, -1, -1, dtype=np.int64)
    layout_type = ir.RankedTensorType.get([ndim], ir.IndexType.get())
    # ndarrays have the buffer protocol, which NumPy's stubs do not declare for 3.11.
    attr: ir.Attribute = ir.DenseIntElementsAttr.get(order, type=layout_type)  # type: ignore[call-overload]
    return attr


def _declare_empty_mesh(ctx: LoweringRuleContext) -> None:
    """`sdy.mesh @empty_mesh = <[]>`, once, after the module's other meshes."""
    mctx = ctx.module_context
    if _EMPTY in mctx.functions:
        return
    body = mctx.module.body
    after_meshes = next(op for op in body.operations if op.operation.name != "sdy.mesh")
    with ir.InsertionPoint(after_meshes):
        op = sdy.MeshOp(_EMPTY, sdy.MeshAttr.get([]))
    op.operation.attributes["stablehlo.mesh"] = ir.DictAttr.get({"axes": ir.ArrayAttr.get([])})
    mctx.functions[_EMPTY] = _EMPTY


def _manual_sharding(ctx: LoweringRuleContext, debug: bool) -> ir.Attribute:
    """Each result (one value when there are none) replicated over `@empty_mesh`."""
    spmd = spmd_context()
    assert spmd is not None
    if spmd.manual_axes != frozenset(spmd.mesh.axis_names):
        if debug:
            # JAX gathers the operands and runs the callback on one device only.
            raise NotImplementedError(
                "Lamina lowers debug callbacks inside shard_map only when every mesh axis is "
                "manual (JAX's partial-auto gather is not implemented)."
            )
        raise NotImplementedError(
            "callbacks are only supported in spmd computations when all mesh axes are "
            "partitioned manually (no partial automatic sharding)."
        )
    _declare_empty_mesh(ctx)
    ranks = [a.ndim if isinstance(a, ShapedArray) else 0 for a in ctx.avals_out] or [0]
    values = ", ".join(f"<@{_EMPTY}, [{', '.join(['{}'] * n)}]>" for n in ranks)
    return ir.Attribute.parse(f"#sdy.sharding_per_value<[{values}]>")


def _callback_sharding(ctx: LoweringRuleContext, count: int, debug: bool) -> ir.Attribute | None:
    """JAX's annotation of a callback: inside a manual computation, replicated per device;
    in a program for one device, `count` values on the one-device mesh `@maximal_mesh_0`
    (declared once, at the top of the module); None in a program for a mesh."""
    mctx = ctx.module_context
    if spmd_context() is not None:
        return _manual_sharding(ctx, debug)
    if mctx.mesh is not None:
        return None
    if _MAXIMAL not in mctx.functions:
        body = mctx.module.body
        with ir.InsertionPoint(next(iter(body.operations))):
            op = sdy.MeshOp(_MAXIMAL, sdy.MeshAttr.get([], [0]))
        device_ids = ir.DenseIntElementsAttr.get(
            np.zeros(1, np.int64),  # type: ignore[call-overload]  # ndarray is a Buffer
            type=ir.RankedTensorType.get([1], ir.IntegerType.get_signless(64)),
        )
        op.operation.attributes["stablehlo.mesh"] = ir.DictAttr.get(
            {"axes": ir.ArrayAttr.get([]), "device_ids": device_ids}
        )
        mctx.functions[_MAXIMAL] = _MAXIMAL
    values = ", ".join([f"<@{_MAXIMAL}, []>"] * count)
    return ir.Attribute.parse(f"#sdy.sharding_per_value<[{values}]>")


def emit_python_callback(
    ctx: LoweringRuleContext,
    host: Callable[..., tuple[Any, ...]],
    operands: Sequence[IrValue],
    *,
    has_side_effect: bool,
    effect: Effect | None = None,
    annotate: bool = True,
    annotated_values: int | None = None,
    debug: bool = False,
) -> list[IrValue]:
    """A `custom_call` of `host` (NumPy arrays in, a tuple of them out) on `operands`; for an
    ordered `effect`, threaded on that effect's token (its first operand and result)."""
    if effect is not None and type(effect) in ordered_effect_types:
        token = ctx.tokens_in.get(effect)
        untokened = host

        def host(token: Any, *args: Any) -> tuple[Any, ...]:
            return (token, *untokened(*args))

        tok = abstract_token
        # As JAX: an ordered debug callback is not annotated; an ordered io_callback is, its
        # token too when it has results.
        annotate = isinstance(effect, OrderedIOEffect)
        with_token = ctx.replace(avals_in=[tok, *ctx.avals_in], avals_out=[tok, *ctx.avals_out])
        token_out, *results = emit_python_callback(
            with_token,
            host,
            [token, *operands],
            has_side_effect=has_side_effect,
            annotate=annotate,
            annotated_values=len(ctx.avals_out) + 1 if ctx.avals_out else 1,
        )
        ctx.set_tokens_out(ctx.tokens_in.update({effect: token_out}))
        return results
    callbacks = ctx.module_context.host_callbacks
    callbacks.append(host)
    index = len(callbacks) - 1
    result_types = [ctx.module_context.ir_type(a) for a in ctx.avals_out]
    attributes: dict[str, ir.Attribute] = {
        "call_target_name": ir.StringAttr.get(TARGET),
        "has_side_effect": ir.BoolAttr.get(has_side_effect),
        "backend_config": ir.StringAttr.get(""),
        "api_version": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1),
        "operand_layouts": ir.ArrayAttr.get([_layout(ctx.caches, a) for a in ctx.avals_in]),
        "result_layouts": ir.ArrayAttr.get([_layout(ctx.caches, a) for a in ctx.avals_out]),
    }
    op = hlo.CustomCallOp.build_generic(
        results=result_types, operands=list(operands), attributes=attributes
    )
    if annotate:
        count = max(1, len(ctx.avals_out)) if annotated_values is None else annotated_values
        sharding = _callback_sharding(ctx, count, debug)
        if sharding is not None:
            op.operation.attributes["sdy.sharding"] = sharding
    # As JAX's text: the FFI attributes travel as `mhlo.backend_config`.
    op.operation.attributes["mhlo.backend_config"] = ir.DictAttr.get(
        {"index": ir.IntegerAttr.get(ir.IntegerType.get_unsigned(64), index)}
    )
    return list(op.results)


def _returning(callback: FlatCallback, result_avals: Sequence[ShapedArray]) -> Callable[..., Any]:
    def host(*args: Any) -> tuple[Any, ...]:
        return tuple(call_checked(callback, args, result_avals))

    return host


@register(pure_callback_p)
def _pure_callback_lowering(
    ctx: LoweringRuleContext,
    *args: IrValue,
    callback: FlatCallback,
    result_avals: Sequence[ShapedArray],
    **params: Any,
) -> list[IrValue]:
    host = _returning(callback, result_avals)
    return emit_python_callback(ctx, host, args, has_side_effect=False)


@register(io_callback_p)
def _io_callback_lowering(
    ctx: LoweringRuleContext,
    *args: IrValue,
    callback: FlatCallback,
    result_avals: Sequence[ShapedArray],
    ordered: bool,
    **params: Any,
) -> list[IrValue]:
    host = _returning(callback, result_avals)
    effect = ordered_io_effect if ordered else io_effect
    return emit_python_callback(ctx, host, args, has_side_effect=True, effect=effect)


def _no_results(callback: Callable[..., Any]) -> Callable[..., tuple[()]]:
    def host(*args: Any) -> tuple[()]:
        callback(*args)
        return ()

    return host


@register(debug_callback_p)
def _debug_callback_lowering(
    ctx: LoweringRuleContext,
    *args: IrValue,
    callback: Callable[..., Any],
    effect: Effect,
    **params: Any,
) -> list[IrValue]:
    host = _no_results(callback)
    return emit_python_callback(ctx, host, args, has_side_effect=True, effect=effect, debug=True)


@register(debug_print_p)
def _debug_print_lowering(ctx: LoweringRuleContext, *args: IrValue, **params: Any) -> list[IrValue]:
    host = _no_results(print_callback(params))
    effect = ordered_debug_effect if params["ordered"] else debug_effect
    return emit_python_callback(ctx, host, args, has_side_effect=True, effect=effect, debug=True)


@register(check_p)
def _check_lowering(
    ctx: LoweringRuleContext, *args: IrValue, err_tree: Any, debug: bool
) -> list[IrValue]:
    """A `checkify.check` left in a compiled program: `checkify` did not functionalize it. A
    `debug_check` is dropped; any other raises JAX's error, as JAX's CPU lowering does with
    `jax_experimental_unsafe_xla_runtime_errors` off (Lamina refuses turning it on)."""
    if debug:
        return []
    raise functionalization_error
