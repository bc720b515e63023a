"""Every core primitive says how it differentiates: a jvp rule, or a declaration that JAX has
none; every primitive linear in some operand that reverse mode can meet has a transpose rule."""

from __future__ import annotations

import sys

import lamina_core
from lamina_core.interpreters.jvp import jvp_rules, non_differentiable
from lamina_core.interpreters.transpose import transpose_rules
from lamina_core.ir._rules import abstract_eval_rules

# Primitives with a jvp rule whose tangent equations are the primitive itself applied to
# tangents (so transposing grad's linear jaxpr meets them).
LINEAR = {
    "add", "sub", "neg", "mul", "div", "add_any", "convert_element_type", "reduce_sum",
    "broadcast_in_dim", "reshape", "squeeze", "transpose", "rev", "concatenate", "pad",
    "slice", "dynamic_slice", "dynamic_update_slice", "gather", "scatter-add", "select_n",
    "dot_general", "cumsum", "real", "imag", "complex", "conj", "jit", "split", "tile",
    "reduce_precision",
}  # fmt: skip


def _core_primitives() -> list[lamina_core.Primitive]:
    """The primitives lamina-core's modules define (not ones tests register on the side)."""
    found: dict[int, lamina_core.Primitive] = {}
    for name, module in list(sys.modules.items()):
        if name == "lamina_core" or name.startswith("lamina_core."):
            for value in vars(module).values():
                if isinstance(value, lamina_core.Primitive) and value in abstract_eval_rules:
                    found[id(value)] = value
    return list(found.values())


def test_every_core_primitive_has_a_jvp_rule_or_is_declared_non_differentiable() -> None:
    missing = sorted(
        p.name for p in _core_primitives() if p not in jvp_rules and p not in non_differentiable
    )
    assert missing == []


def test_linear_primitives_have_transpose_rules() -> None:
    names = {p.name: p for p in _core_primitives()}
    missing = sorted(n for n in LINEAR if n in names and names[n] not in transpose_rules)
    assert missing == []
