"""Core's own rule tables: abstract evaluation, the NumPy reference, and effects.

Transformation tables (jvp, transpose, batching, partial eval) live beside the transformations
that own them; lowering rules live in lamina-mlir. Each table is keyed by `Primitive`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from lamina_core.ir._avals import AbstractValue
from lamina_core.ir._effects import Effect, Effects
from lamina_core.ir._primitive import Primitive, RuleTable

AbstractEvalRule: TypeAlias = Callable[..., AbstractValue | Sequence[AbstractValue]]
"""`rule(*in_avals, **params)`: the output aval, or a sequence for multiple-result primitives."""

ImplRule: TypeAlias = Callable[..., Any]
"""`rule(*numpy_values, **params)`: the NumPy reference result(s)."""

EffectsRule: TypeAlias = Callable[..., Effects]
"""`rule(*in_avals, **params)`: the effects of one application (default: none)."""

abstract_eval_rules: RuleTable[AbstractEvalRule] = RuleTable("abstract evaluation")
impl_rules: RuleTable[ImplRule] = RuleTable("NumPy reference evaluation")
effects_rules: RuleTable[EffectsRule] = RuleTable("effects")

value_impl_rules: RuleTable[ImplRule] = RuleTable("evaluation on values")
"""Rules evaluating a primitive on the eager values as they are, not NumPy copies: for
primitives on mutable values (a Ref's reads and writes), which must reach the value itself.
Core's reference evaluator uses them first."""

evaluated_on_values: set[Primitive] = set()
"""Primitives an eager evaluator always applies with their `value_impl_rules` rule, in
Python, never as a compiled program: those making or consuming a Ref object itself, and hi
primitives (whose eager meaning is their `expand`, run operation by operation)."""

python_impl_primitives: set[Primitive] = set()
"""Primitives whose eager meaning is a Python function of their operands (JAX's `def_impl`):
an eager evaluator calls their `value_impl_rules` rule on the values as they are and does
nothing else (no abstract evaluation first, no compiled program), as JAX's eval trace calls a
primitive's `impl`."""

host_effect_types: set[type[Effect]] = set()
"""Kinds of effects only the host can perform (a failed `checkify.check` raising): see
`body_evaluated_primitives`. Written at import by the layer that defines the effect."""

body_evaluated_primitives: set[Primitive] = set()
"""Call primitives that JAX applies eagerly by running their body in Python (custom_jvp and
custom_vjp calls, remat, closed_call; not jit or control flow, which it compiles): an eager
evaluator runs their body equation by equation, with `impl_rules`, when the call's effects
include one of `host_effect_types`, and compiles them otherwise."""

ConstFoldRule: TypeAlias = Callable[..., Any]
"""`rule(*constants, **params)`: the folded result for constant operands, or None to stage."""

const_fold_rules: RuleTable[ConstFoldRule] = RuleTable("constant folding")
"""Primitives staging evaluates on the host when every operand is a constant (JAX folds
`convert_element_type` of scalar constants, so transposes of literal cotangents fold)."""
