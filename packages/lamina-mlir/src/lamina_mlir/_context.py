"""The lowering's contexts and its rule table.

`LoweringParameters` say how to lower (hoist constants or not), `ModuleContext` is the state of
one module being built (its MLIR context, symbol table, memo tables), and a
`LoweringRuleContext` is what one lowering rule sees for one equation: the avals in and out,
the tokens of ordered effects, and `const_lowering`, which maps the identity of each constant
hoisted into the current function to the function argument that carries it (seed 000).

A lowering rule is `rule(ctx, *operands, **params) -> Sequence[ir.Value]`; rules live in
`lowering_rules`, keyed by primitive, and this package registers one for every core primitive.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeAlias

from jaxlib.mlir import ir

from lamina_core.ir import (
    NO_SOURCE_INFO,
    AbstractMesh,
    AbstractValue,
    Effect,
    Mesh,
    Primitive,
    RuleTable,
    SourceInfo,
)
from lamina_mlir._ir_types import aval_to_ir_type
from lamina_mlir._mlir_context import ContextCaches, IrValue


@dataclass(frozen=True, slots=True)
class LoweringParameters:
    """How to lower; part of what a compiled module depends on."""

    hoist_constants_as_args: bool = True
    """Pass non-scalar constants above the size threshold as `jax.const` arguments (seed 000).
    False (what export uses) emits every constant as a `stablehlo.constant`."""
    global_constant_computation: bool = False
    """The functions lowered compute only dimension values (an exported `@main` solving its
    dimension variables): each argument is marked `{jax.global_constant = ""}`, as JAX's."""


@dataclass(frozen=True, slots=True)
class TokenSet:
    """The current token of each ordered effect, in a fixed effect order."""

    tokens: tuple[tuple[Effect, IrValue], ...] = ()

    def effects(self) -> tuple[Effect, ...]:
        return tuple(e for e, _ in self.tokens)

    def get(self, effect: Effect) -> IrValue:
        for e, token in self.tokens:
            if e == effect:
                return token
        raise KeyError(f"lowering: no token for effect {effect}")

    def update(self, new: Mapping[Effect, IrValue]) -> TokenSet:
        """These tokens, with those of `new` replacing the ones for the same effects."""
        return TokenSet(tuple((e, new.get(e, t)) for e, t in self.tokens))

    def __iter__(self) -> Iterator[IrValue]:
        return (t for _, t in self.tokens)

    def __len__(self) -> int:
        return len(self.tokens)


NO_TOKENS: Final = TokenSet()


@dataclass(eq=False, slots=True, kw_only=True)
class ModuleContext:
    """One module being lowered. Identity is intended: it owns the module's memo tables."""

    caches: ContextCaches
    """The MLIR context with its memoized types and attributes."""
    module: ir.Module
    symbol_table: ir.SymbolTable
    lowering_parameters: LoweringParameters
    name_stack: str
    """The root of op names in locations, e.g. `jit(f)`."""
    functions: dict[Any, Any] = field(default_factory=dict)
    """Functions already emitted for nested calls, by callee (a call lowers once per callee)."""
    locations: dict[Any, ir.Location] = field(default_factory=dict)
    """Op locations by (name stack, primitive, source), made once per module."""
    mesh: AbstractMesh | None = None
    """The device mesh the module is lowered for, declared as `@mesh` at the top of the module
    (`_sharding.emit_mesh`); None for a single-device module. A rule that finds it None and
    needs one (shard_map) may declare it and set this (and `device_mesh`, if it knows the
    devices): `LoweredModule.mesh` then reports it."""
    device_mesh: Mesh | None = None
    """The concrete mesh behind `mesh`, when known."""
    host_callbacks: list[Callable[..., Any]] = field(default_factory=list)
    """Python functions the module's host-callback `custom_call`s name by index; whoever
    compiles the module hands them to the compiler."""

    @property
    def context(self) -> ir.Context:
        return self.caches.context

    def ir_type(self, aval: AbstractValue) -> ir.Type:
        return aval_to_ir_type(self.caches, aval)


@dataclass(slots=True, kw_only=True, eq=False)
class LoweringRuleContext:
    """What a lowering rule sees of one equation.

    Treat as immutable (derive others with `replace`); not `frozen` because one is made per
    equation and a frozen dataclass's constructor costs three times as much (measured).
    """

    module_context: ModuleContext
    primitive: Primitive | None
    avals_in: Sequence[AbstractValue]
    avals_out: Sequence[AbstractValue]
    tokens_in: TokenSet = NO_TOKENS
    const_lowering: Mapping[int, IrValue]
    """`id(constant)` to the current function's value for it (a `jax.const` argument)."""
    name_stack: str = ""
    source_info: SourceInfo = NO_SOURCE_INFO
    _tokens_out: list[TokenSet] | None = None
    """Box for the rule's output tokens, shared with contexts made by `replace`; a rule of an
    effectful primitive sets it with `set_tokens_out`."""

    @property
    def caches(self) -> ContextCaches:
        return self.module_context.caches

    @property
    def tokens_out(self) -> TokenSet | None:
        return self._tokens_out[-1] if self._tokens_out else None

    def set_tokens_out(self, tokens: TokenSet) -> None:
        if self._tokens_out is None:
            self._tokens_out = []
        self._tokens_out.append(tokens)

    def replace(self, **changes: Any) -> LoweringRuleContext:
        """A context for delegating to another rule, e.g. with other avals."""
        if self._tokens_out is None:
            self._tokens_out = []
        return dataclasses.replace(self, _tokens_out=self._tokens_out, **changes)


LoweringRule: TypeAlias = Callable[..., Sequence[IrValue]]
"""`rule(ctx, *operands, **params)`: the IR values of the equation's outputs, given its
`LoweringRuleContext`, the IR values of its operands and its params."""

lowering_rules: RuleTable[LoweringRule] = RuleTable("lowering")
"""Lowering rules by primitive; lamina-mlir registers one for every core primitive."""

single_op_rules: Final[dict[Primitive, tuple[str, bool]]] = {}
"""Primitives whose lowering, when every operand has the output's shape and every param is
None, is one op on the operands: `(op name, real_only)`, where `real_only` says the shortcut
does not hold for complex operands. `jaxpr_subcomp` emits those ops directly, without a rule
context or a rule call (a quarter of the time of an elementwise equation, measured); each
such primitive also has its rule in `lowering_rules`, which handles every other case."""

ordered_effect_types: Final[set[type[Effect]]] = set()
"""Effect classes whose effects are ordered: each gets a token argument and result threaded
through the functions that have it. Written at import by the layer that defines the effect."""


shardable_ordered_effect_types: Final[set[type[Effect]]] = set()
"""The ordered effect classes a program for more than one device may have (an ordered
`io_callback`'s): their tokens are replicated over the devices. Written at import, as above."""


def ordered_effects(effects: frozenset[Effect]) -> tuple[Effect, ...]:
    """The ordered effects among `effects`, in a deterministic order (by their text)."""
    return tuple(sorted((e for e in effects if type(e) in ordered_effect_types), key=str))
