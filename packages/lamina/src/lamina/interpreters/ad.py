"""`jax.interpreters.ad`: forward- and reverse-mode rules of primitives, in Lamina's tables.

`primitive_jvps` and `primitive_transposes` are Lamina's jvp and transpose rule tables seen as
dicts (JAX's rules and Lamina's take the same arguments: `jvp(primals, tangents, **params)`,
`transpose(ct, *args, **params)` with `UndefinedPrimal` linear arguments and `Zero` symbolic
zeros). The `def*` helpers register JAX's rule families into them, replacing any rule the
primitive had, as assigning into JAX's dicts does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import lamina_core
from lamina_core import interpreters as _interp
from lamina_core.interpreters import JVPTrace as JVPTrace
from lamina_core.interpreters import JVPTracer as JVPTracer
from lamina_core.interpreters import UndefinedPrimal as UndefinedPrimal
from lamina_core.interpreters import Zero as Zero
from lamina_core.interpreters import add_any_p as add_jaxvals_p
from lamina_core.interpreters import add_tangents as add_tangents
from lamina_core.interpreters import instantiate_zeros as instantiate_zeros
from lamina_core.interpreters import jvp_rules, transpose_rules
from lamina_core.interpreters import zeros_like_aval as zeros_like_aval
from lamina_core.ir import Primitive, RuleMapping

primitive_jvps: RuleMapping[Any] = RuleMapping(jvp_rules)
"""`primitive_jvps[p] = rule`: `rule(primals, tangents, **params) -> (primal_out, tangent_out)`."""

primitive_transposes: RuleMapping[Any] = RuleMapping(transpose_rules)
"""`primitive_transposes[p] = rule`: `rule(ct, *args, **params) -> one cotangent (or None)
per argument`; linear arguments arrive as `UndefinedPrimal`."""


def _forget(prim: Primitive) -> None:
    for table in (jvp_rules, transpose_rules):
        if prim in table:
            table.remove(prim)


def add_jaxvals(x: Any, y: Any) -> Any:
    """`x + y` of two tangents (JAX's `add_any`)."""
    return add_jaxvals_p.bind(x, y)


def is_undefined_primal(x: Any) -> bool:
    return type(x) is UndefinedPrimal


def get_primitive_transpose(p: Primitive) -> Any:
    try:
        return primitive_transposes[p]
    except KeyError:
        raise NotImplementedError(
            f"Transpose rule (for reverse-mode differentiation) for '{p}' not implemented"
        ) from None


def defjvp(primitive: Primitive, *jvprules: Callable[..., Any] | None) -> None:
    """The tangent is the sum over operands i of `jvprules[i](t_i, *primals, **params)`."""
    if jvp_rules.get(primitive) is not None:
        jvp_rules.remove(primitive)
    _interp.defjvp(primitive, *jvprules)


def defjvp2(primitive: Primitive, *jvprules: Callable[..., Any] | None) -> None:
    """As `defjvp`, each rule also given the primal output: `rule(t_i, ans, *primals)`."""
    if jvp_rules.get(primitive) is not None:
        jvp_rules.remove(primitive)
    _interp.defjvp2(primitive, *jvprules)


def _zeros_for(args: Sequence[Any]) -> list[Any]:
    return [Zero(x.aval.to_tangent_aval()) for x in args]


def deflinear(primitive: Primitive, transpose_rule: Callable[..., Any]) -> None:
    """`primitive` is linear: its jvp applies it to the tangents, and its transpose is
    `transpose_rule(ct, **params)` (the cotangents of all operands)."""

    def transpose(ct: Any, *args: Any, **params: Any) -> Any:
        return _zeros_for(args) if type(ct) is Zero else transpose_rule(ct, **params)

    _forget(primitive)
    _interp.deflinear(primitive, transpose)


def deflinear2(primitive: Primitive, transpose_rule: Callable[..., Any]) -> None:
    """As `deflinear`, the transpose rule also given the operands: `rule(ct, *args)`."""

    def transpose(ct: Any, *args: Any, **params: Any) -> Any:
        return _zeros_for(args) if type(ct) is Zero else transpose_rule(ct, *args, **params)

    _forget(primitive)
    _interp.deflinear(primitive, transpose)


def defbilinear(
    prim: Primitive, lhs_rule: Callable[..., Any], rhs_rule: Callable[..., Any]
) -> None:
    """`prim(x, y)` is linear in each operand; `lhs_rule(ct, x, y)` / `rhs_rule(ct, x, y)`
    transpose it in the undefined one."""
    _forget(prim)
    _interp.defbilinear(prim, lhs_rule, rhs_rule)


def jvp(
    fun: Callable[..., Any],
    primals: Sequence[Any],
    tangents: Sequence[Any],
    has_aux: bool = False,
    instantiate: bool = True,
    transform_stack: bool = True,
) -> Any:
    """`fun`'s outputs at `primals` and their tangents along `tangents` (`jax.jvp`)."""
    del instantiate, transform_stack  # output tangents are always arrays, as `jax.jvp`'s
    return lamina_core.jvp(fun, tuple(primals), tuple(tangents), has_aux=has_aux)


def linearize(
    traceable: Callable[..., Any], primals: Sequence[Any], has_aux: bool = False,
    is_vjp: bool = False,
) -> Any:  # fmt: skip
    """`traceable`'s outputs at `primals` and its linear map (`jax.linearize`)."""
    del is_vjp
    return lamina_core.linearize(traceable, *primals, has_aux=has_aux)
