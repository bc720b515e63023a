"""Dead-code elimination: drop equations whose results nobody reads.

An equation stays if one of its results is used or if it has effects. With `prune_invars`,
inputs nothing reads are dropped too (what `jit(..., keep_unused=False)` compiles); the
returned flags say which inputs remain, so callers can pass only those.
"""

from __future__ import annotations

from collections.abc import Sequence

from lamina_core.jaxpr import DropVar, Jaxpr, Var


def dce_jaxpr(
    jaxpr: Jaxpr, used_outputs: Sequence[bool] | None = None, *, prune_invars: bool = False
) -> tuple[Jaxpr, list[bool]]:
    """`jaxpr` without its dead equations, and which of its inputs it still reads."""
    outvars = list(jaxpr.outvars)
    if used_outputs is not None:
        outvars = [v for v, used in zip(outvars, used_outputs, strict=True) if used]
    live: set[Var] = {v for v in outvars if isinstance(v, Var)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if eqn.effects or any(v in live for v in eqn.outvars if not isinstance(v, DropVar)):
            kept.append(eqn)
            live.update(v for v in eqn.invars if isinstance(v, Var))
    kept.reverse()
    used_inputs = [v in live for v in jaxpr.invars]
    invars = [
        v for v, used in zip(jaxpr.invars, used_inputs, strict=True) if used or not prune_invars
    ]
    if len(kept) == len(jaxpr.eqns) and len(invars) == len(jaxpr.invars) and used_outputs is None:
        return jaxpr, used_inputs
    return jaxpr.replace(invars=invars, outvars=outvars, eqns=kept), used_inputs
