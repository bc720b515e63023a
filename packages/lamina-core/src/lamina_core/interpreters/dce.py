"""Dead-code elimination: drop equations whose results nobody reads.

An equation stays if one of its results is used or if it has effects. Primitives holding
jaxprs register a rule in `dce_rules` to shrink themselves instead (a `jit` keeps only the
outputs read and the inputs its trimmed callee reads, as JAX's). With `prune_invars`, inputs
nothing reads are dropped too (what `jit(..., keep_unused=False)` compiles); the returned
flags say which inputs remain, so callers can pass only those.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeAlias

from lamina_core.ir import DropVar, Jaxpr, JaxprEqn, RuleTable, Var

DceRule: TypeAlias = Callable[[list[bool], JaxprEqn], tuple[list[bool], JaxprEqn | None]]
"""`rule(used_outputs, eqn) -> (used_inputs, new eqn or None to drop it)`."""

dce_rules: RuleTable[DceRule] = RuleTable("dead-code elimination")


def dce_jaxpr(
    jaxpr: Jaxpr, used_outputs: Sequence[bool] | None = None, *, prune_invars: bool = False
) -> tuple[Jaxpr, list[bool]]:
    """`jaxpr` without its dead equations, and which of its inputs it still reads."""
    outvars = list(jaxpr.outvars)
    if used_outputs is not None:
        outvars = [v for v, used in zip(outvars, used_outputs, strict=True) if used]
    live: set[Var] = {v for v in outvars if isinstance(v, Var)}
    kept = []
    changed = False
    for eqn in reversed(jaxpr.eqns):
        used = [not isinstance(v, DropVar) and v in live for v in eqn.outvars]
        rule = dce_rules.get(eqn.primitive)
        if rule is not None:
            used_in, new = rule(used, eqn)
            changed = changed or new is not eqn
            if new is not None:
                kept.append(new)
                live.update(
                    v for v, u in zip(eqn.invars, used_in, strict=True) if u and isinstance(v, Var)
                )
            continue
        if eqn.effects or any(used):
            kept.append(eqn)
            live.update(v for v in eqn.invars if isinstance(v, Var))
    kept.reverse()
    used_inputs = [v in live for v in jaxpr.invars]
    invars = [
        v for v, used in zip(jaxpr.invars, used_inputs, strict=True) if used or not prune_invars
    ]
    if (
        not changed
        and len(kept) == len(jaxpr.eqns)
        and len(invars) == len(jaxpr.invars)
        and used_outputs is None
    ):
        return jaxpr, used_inputs
    return jaxpr.replace(invars=invars, outvars=outvars, eqns=kept), used_inputs


def dce_jaxpr_keeping(
    jaxpr: Jaxpr, used_outputs: Sequence[bool], keep_inputs: Sequence[bool]
) -> tuple[Jaxpr, list[bool]]:
    """JAX's `dce_jaxpr(..., instantiate=keep_inputs)`: `jaxpr` reduced to `used_outputs`,
    taking only the inputs it reads or `keep_inputs` flags; returns which inputs it takes."""
    trimmed, used = dce_jaxpr(jaxpr, used_outputs)
    taken = [u or k for u, k in zip(used, keep_inputs, strict=True)]
    invars = tuple(v for v, t in zip(trimmed.invars, taken, strict=True) if t)
    if trimmed is jaxpr and len(invars) == len(jaxpr.invars):
        return jaxpr, taken
    return trimmed.replace(invars=invars), taken
