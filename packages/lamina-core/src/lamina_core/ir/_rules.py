"""Core's own rule tables: abstract evaluation, the NumPy reference, and effects.

Transformation tables (jvp, transpose, batching, partial eval) live beside the transformations
that own them; lowering rules live in lamina-mlir. Each table is keyed by `Primitive`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from lamina_core.ir._avals import AbstractValue
from lamina_core.ir._effects import Effects
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

ConstFoldRule: TypeAlias = Callable[..., Any]
"""`rule(*constants, **params)`: the folded result for constant operands, or None to stage."""

const_fold_rules: RuleTable[ConstFoldRule] = RuleTable("constant folding")
"""Primitives staging evaluates on the host when every operand is a constant (JAX folds
`convert_element_type` of scalar constants, so transposes of literal cotangents fold)."""
