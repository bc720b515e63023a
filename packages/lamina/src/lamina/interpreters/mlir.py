"""`jax.interpreters.mlir`: lowering rules of primitives, in lamina-mlir's table.

A lowering rule is `rule(ctx, *operands, **params) -> [ir.Value, ...]` in both, run with the
module's MLIR context, a location and an insertion point active, so rules may build ops with
jaxlib's dialect bindings (`jax.extend.mlir.dialects.stablehlo`). `lower_fun` lowers a rule
written as a traceable function. The helpers below make types, attributes and constants in
the active context. Lamina compiles for the CPU: `register_lowering` for another platform
only records the rule.

Libraries extend lowering through lamina-mlir's tables: `register_constant_handler` (a type's
constants), `ir_type_handlers` (an aval class's IR type, a view of `lamina_mlir.ir_type_rules`
whose handlers take the aval alone, as JAX's do). The programs API (`lower_jaxpr_to_fun`,
`lower_jaxpr_to_module`) and `emit_python_callback` adapt lamina-mlir's to JAX's signatures.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Iterator, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias

import numpy as np
from jaxlib.mlir import ir as ir
from jaxlib.mlir.dialects import stablehlo as hlo

from lamina.interpreters._ir_tree import IrTreeRegistry
from lamina.interpreters._mlir_callback import emit_python_callback as emit_python_callback
from lamina.interpreters._mlir_contexts import AxisContext as AxisContext
from lamina.interpreters._mlir_contexts import ShapePolyLoweringState as ShapePolyLoweringState
from lamina.interpreters._mlir_contexts import ShardingContext as ShardingContext
from lamina.interpreters._mlir_contexts import SPMDAxisContext as SPMDAxisContext
from lamina.interpreters._mlir_contexts import lowerable_effects as lowerable_effects
from lamina.interpreters._mlir_programs import LoweringResult as LoweringResult
from lamina.interpreters._mlir_programs import lower_jaxpr_to_fun as lower_jaxpr_to_fun
from lamina.interpreters._mlir_programs import lower_jaxpr_to_module as lower_jaxpr_to_module
from lamina_core.interpreters import trace_to_jaxpr
from lamina_core.ir import AbstractValue, ClosedJaxpr, Jaxpr, Primitive
from lamina_core.ir import Mesh as Mesh
from lamina_mlir import (
    ContextCaches,
    IrTypeRule,
    constant_handlers,
    handled_constant,
    ir_type_rules,
    lowering_rules,
    make_context,
    merge_modules,
)
from lamina_mlir import LoweringParameters as LoweringParameters
from lamina_mlir import LoweringRule as LoweringRule
from lamina_mlir import LoweringRuleContext as LoweringRuleContext
from lamina_mlir import ModuleContext as ModuleContext
from lamina_mlir import TokenSet as TokenSet
from lamina_mlir import aval_to_ir_type as _aval_to_ir_type
from lamina_mlir import dtype_to_ir_type as _dtype_to_ir_type
from lamina_mlir import ir_attribute as _ir_attribute
from lamina_mlir import ir_constant as _ir_constant
from lamina_mlir import jaxpr_subcomp as _jaxpr_subcomp

Value: TypeAlias = ir.Value
Token: TypeAlias = ir.Value
_IrValue: TypeAlias = "ir.Value[Any]"
MeshAxisName: TypeAlias = Any

DEVICE_TO_DEVICE_TYPE = 1
SEND_TO_HOST_TYPE = 2
RECV_FROM_HOST_TYPE = 3
"""XLA's channel kinds, for send/recv ops' `channel_handle`."""

__all__ = [
    "DEVICE_TO_DEVICE_TYPE",
    "RECV_FROM_HOST_TYPE",
    "SEND_TO_HOST_TYPE",
    "AxisContext",
    "ConstantHandler",
    "LoweringParameters",
    "LoweringResult",
    "LoweringRule",
    "LoweringRuleContext",
    "Mesh",
    "MeshAxisName",
    "ModuleContext",
    "SPMDAxisContext",
    "ShapePolyLoweringState",
    "ShardingContext",
    "Token",
    "TokenSet",
    "Value",
    "aval_to_ir_type",
    "aval_to_ir_types",
    "core_call_lowering",
    "dense_int_array",
    "dense_int_elements",
    "dtype_to_ir_type",
    "emit_python_callback",
    "flatten_ir_types",
    "flatten_ir_values",
    "i32_attr",
    "i64_attr",
    "ir",
    "ir_attribute",
    "ir_constant",
    "ir_constants",
    "ir_tree_registry",
    "ir_type_handlers",
    "jaxpr_subcomp",
    "lower_fun",
    "lower_jaxpr_to_fun",
    "lower_jaxpr_to_module",
    "lowerable_effects",
    "make_ir_context",
    "merge_mlir_modules",
    "module_to_bytecode",
    "module_to_string",
    "register_constant_handler",
    "register_lowering",
    "shape_tensor",
    "token_type",
    "unflatten_ir_values_like_types",
]

_other_platforms: dict[tuple[Primitive, str], LoweringRule] = {}
"""Rules registered for platforms Lamina does not compile for (kept, never used)."""


def register_lowering(
    prim: Primitive,
    rule: LoweringRule,
    platform: str | None = None,
    inline: bool = True,
    cacheable: bool = True,
) -> LoweringRule:
    """Lower `prim` with `rule` (on every platform, or on `platform` only).

    `inline` and `cacheable` are accepted for JAX's signature: Lamina lowers each equation
    in place, and caches whole programs, not rules.
    """
    del inline, cacheable
    if platform is None or platform == "cpu":
        lowering_rules.replace(prim, rule)
    else:
        _other_platforms[(prim, platform)] = rule
    return rule


def _caches() -> ContextCaches:
    # Types and attributes made here are the active context's own: a fresh memo per call.
    return ContextCaches(ir.Context.current)


def aval_to_ir_type(
    ctx: ModuleContext | AbstractValue, aval: AbstractValue | None = None
) -> ir.Type:
    """The IR type of `aval`'s values: `aval_to_ir_type(ctx, aval)` as JAX, or `(aval)`."""
    if aval is None:
        assert isinstance(ctx, AbstractValue)
        return _aval_to_ir_type(_caches(), ctx)
    return _aval_to_ir_type(_caches(), aval)


def aval_to_ir_types(
    ctx: ModuleContext | AbstractValue, aval: AbstractValue | None = None
) -> tuple[ir.Type, ...]:
    return (aval_to_ir_type(ctx, aval),)


def dtype_to_ir_type(dtype: Any) -> ir.Type:
    return _dtype_to_ir_type(_caches(), np.dtype(dtype))


class _IrTypeHandler(Protocol):
    """JAX's IR type handler: `handler(aval)`, the IR type (or a 1-tuple of it) of `aval`."""

    def __call__(self, aval: Any, /) -> ir.Type | Sequence[ir.Type]: ...


@dataclass(frozen=True, slots=True)
class _HandlerRule:
    """A JAX-style handler as a lamina-mlir IR type rule (which also takes the caches)."""

    handler: _IrTypeHandler

    def __call__(self, caches: ContextCaches, aval: AbstractValue) -> ir.Type:
        out = self.handler(aval)
        if isinstance(out, ir.Type):
            return out
        types = list(out)
        if len(types) != 1:
            raise TypeError(
                f"lowering: the IR type handler for {type(aval).__name__} gave {len(types)} "
                "types; Lamina lowers each value to one IR value"
            )
        return types[0]


@dataclass(frozen=True, slots=True)
class _RuleHandler:
    """A lamina-mlir rule seen as a JAX-style handler, in the active MLIR context."""

    rule: IrTypeRule

    def __call__(self, aval: Any, /) -> ir.Type:
        return self.rule(_caches(), aval)


class _IrTypeHandlers(MutableMapping[type[AbstractValue], _IrTypeHandler]):
    """`lamina_mlir.ir_type_rules` with JAX's handler signature, as `ir_type_handlers`."""

    def __getitem__(self, aval_type: type[AbstractValue]) -> _IrTypeHandler:
        rule = ir_type_rules[aval_type]
        return rule.handler if isinstance(rule, _HandlerRule) else _RuleHandler(rule)

    def __setitem__(self, aval_type: type[AbstractValue], handler: _IrTypeHandler) -> None:
        ir_type_rules[aval_type] = _HandlerRule(handler)

    def __delitem__(self, aval_type: type[AbstractValue]) -> None:
        del ir_type_rules[aval_type]

    def __iter__(self) -> Iterator[type[AbstractValue]]:
        return iter(ir_type_rules)

    def __len__(self) -> int:
        return len(ir_type_rules)


ir_type_handlers: MutableMapping[type[AbstractValue], _IrTypeHandler] = _IrTypeHandlers()
"""IR types by aval class; `ir_type_handlers[MyAval] = lambda aval: ir.RankedTensorType...`."""


class ConstantHandler(Protocol):
    """`handler(val, aval)`: the IR value(s) of constant `val`, built at the insertion point."""

    def __call__(self, val: Any, aval: AbstractValue | None, /) -> Any: ...


def register_constant_handler(type_: type, handler_fun: ConstantHandler) -> None:
    """Lower constants of `type_` (and its subclasses without a handler) with `handler_fun`,
    wherever a rule or a jaxpr has one."""
    constant_handlers[type_] = handler_fun


def ir_constant(
    val: Any, *, const_lowering: Any = None, aval: AbstractValue | None = None
) -> _IrValue:
    """The IR value of constant `val` at the current insertion point: what the handler
    registered for its type makes, or a `stablehlo.constant`."""
    del const_lowering  # Lamina's rules see theirs as `ctx.const_lowering`
    return _ir_constant(_caches(), val, aval)


def ir_constants(
    val: Any, *, const_lowering: Any = None, aval: AbstractValue | None = None
) -> tuple[_IrValue, ...]:
    """The IR values of `val`: a registered handler's (any number), else one constant."""
    handled = handled_constant(val, aval)
    if handled is not None:
        return handled
    return (ir_constant(val, const_lowering=const_lowering, aval=aval),)


def i32_attr(i: int) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), i)


def i64_attr(i: int) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)


def dense_int_array(xs: Sequence[int]) -> ir.Attribute:
    return ir.DenseI64ArrayAttr.get([int(x) for x in xs])


def dense_int_elements(xs: Sequence[int]) -> ir.Attribute:
    return ir.DenseIntElementsAttr.get(np.asarray(xs, np.int64))  # type: ignore[call-overload,no-any-return]  # ndarray is a buffer


def ir_attribute(val: Any) -> ir.Attribute:
    """An MLIR attribute holding a Python or NumPy value (JAX's conversion, lamina-mlir's)."""
    return _ir_attribute(val)


def token_type() -> ir.Type:
    return hlo.TokenType.get()


def flatten_ir_values(xs: Iterable[Any]) -> list[_IrValue]:
    """Values and sequences of values, as one flat list."""
    out: list[_IrValue] = []
    for x in xs:
        if isinstance(x, ir.Value):
            out.append(x)
        else:
            out.extend(x)
    return out


def flatten_ir_types(xs: Iterable[Any]) -> list[ir.Type]:
    out: list[ir.Type] = []
    for x in xs:
        if isinstance(x, ir.Type):
            out.append(x)
        else:
            out.extend(x)
    return out


def unflatten_ir_values_like_types(xs: Iterable[_IrValue], ys: Sequence[Any]) -> list[Any]:
    """`xs` grouped as `ys` is: a value per type, a tuple of values per sequence of types."""
    it = iter(xs)
    return [next(it) if isinstance(y, ir.Type) else tuple(next(it) for _ in y) for y in ys]


def module_to_string(module: ir.Module, enable_debug_info: bool | None = None) -> str:
    return str(module.operation.get_asm(enable_debug_info=bool(enable_debug_info)))


def module_to_bytecode(module: ir.Module) -> bytes:
    out = io.BytesIO()
    module.operation.write_bytecode(out)
    return out.getvalue()


ir_tree_registry = IrTreeRegistry()
"""How rules' nests of IR values and types flatten: tuples and lists (see `_ir_tree`)."""
ir_tree_registry.register_node(ir.OpResultList, lambda rs: (list(rs), None), lambda _, rs: list(rs))


def merge_mlir_modules(
    dst_module: ir.Module,
    sym_name: str,
    src_module: ir.Module,
    dst_symtab: ir.SymbolTable | None = None,
) -> str:
    """Move `src_module`'s functions into `dst_module`, private and renamed apart from its
    symbols (`@main` after `sym_name`); return `@main`'s new name. `src_module` is consumed."""
    return merge_modules(dst_module, sym_name, src_module, dst_symtab)


def make_ir_context() -> ir.Context:
    """A new MLIR context with the dialects lowering emits loaded."""
    return make_context()


def shape_tensor(ctx: ModuleContext, sizes: Sequence[int | _IrValue]) -> _IrValue:
    """A 1-D `i32` tensor of `sizes` (integers, or scalar or 1-element values)."""
    del ctx
    i32 = ir.IntegerType.get_signless(32)
    one = ir.RankedTensorType.get([1], i32)
    parts = [
        ir_constant(np.array([s], np.int32))
        if not isinstance(s, ir.Value)
        else hlo.reshape(one, hlo.convert(ir.RankedTensorType.get([], i32), s))
        for s in sizes
    ]
    if not parts:
        return ir_constant(np.zeros((0,), np.int32))
    if len(parts) == 1:
        return parts[0]
    return hlo.concatenate(parts, dimension=0)


def jaxpr_subcomp(
    ctx: ModuleContext,
    jaxpr: Jaxpr,
    name_stack: Any,
    tokens: TokenSet,
    consts_for_constvars: Sequence[Any],
    *args: Any,
    dim_var_values: Sequence[_IrValue] = (),
    const_lowering: Any = None,
    outer_traceback: Any = None,
) -> tuple[list[_IrValue], TokenSet]:
    """Lower `jaxpr` into the current block: its outputs and the tokens after it."""
    del dim_var_values, outer_traceback  # Lamina's shapes are static; locations are its own
    return _jaxpr_subcomp(
        ctx,
        jaxpr,
        str(name_stack or ""),
        tokens,
        consts_for_constvars,
        *args,
        const_lowering=const_lowering or {},
    )


def _lower_jaxpr_here(
    ctx: LoweringRuleContext, closed: ClosedJaxpr, args: Sequence[Any]
) -> list[_IrValue]:
    consts = [_ir_constant(ctx.caches, c, v.aval) for c, v in zip(
        closed.consts, closed.jaxpr.constvars, strict=True)]  # fmt: skip
    outs, tokens = _jaxpr_subcomp(
        ctx.module_context,
        closed.jaxpr,
        ctx.name_stack,
        ctx.tokens_in,
        consts,
        *args,
        const_lowering=ctx.const_lowering,
    )
    if closed.jaxpr.effects:
        ctx.set_tokens_out(tokens)
    return outs


def lower_fun(fun: Callable[..., Any], multiple_results: bool = True) -> LoweringRule:
    """A lowering rule that traces `fun(*operands, **params)` on the equation's operand types
    and lowers what it computes in place (`multiple_results`: `fun` returns a sequence)."""

    def rule(ctx: LoweringRuleContext, *args: Any, **params: Any) -> list[_IrValue]:
        def flat(*xs: Any) -> list[Any]:
            out = fun(*xs, **params)
            return list(out) if multiple_results else [out]

        closed = trace_to_jaxpr(flat, list(ctx.avals_in))
        return _lower_jaxpr_here(ctx, closed, args)

    return rule


def core_call_lowering(
    ctx: LoweringRuleContext,
    *args: Any,
    name: str,
    backend: Any = None,
    call_jaxpr: ClosedJaxpr | Jaxpr,
) -> list[_IrValue]:
    """Lower a call primitive's `call_jaxpr` on the operands, in place."""
    del name, backend
    closed = call_jaxpr if isinstance(call_jaxpr, ClosedJaxpr) else ClosedJaxpr(call_jaxpr, [])
    return _lower_jaxpr_here(ctx, closed, args)
