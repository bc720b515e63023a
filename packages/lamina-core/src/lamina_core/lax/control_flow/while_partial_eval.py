"""Partial evaluation of `while` and its transpose, as JAX's.

A `while` has no linearization rule: under reverse mode its jvp meets partial evaluation.
As long as the predicate is known, a `while` over the known part of the body computes the
known carries now; the unknown carries come from the whole loop staged again (so nothing is
saved, as in JAX: `linearize` works). Transposing that staged loop is where reverse mode
stops, with JAX's message. `checkpoint` splits jaxprs the same way (`partial_eval_jaxpr_custom`
rule), so a checkpointed loop's writes to known Refs happen on the known side.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lamina_core.interpreters import (
    SplitTrace,
    partial_eval_jaxpr_custom,
    partial_eval_jaxpr_custom_rules,
    partial_eval_jaxpr_nounits,
    partial_eval_rules,
    transpose_rules,
)
from lamina_core.ir import ClosedJaxpr, JaxprEqn, Var
from lamina_core.lax.control_flow.loops import while_p


def _while_partial_eval(
    trace: SplitTrace,
    *args: Any,
    cond_jaxpr: ClosedJaxpr,
    body_jaxpr: ClosedJaxpr,
    cond_nconsts: int,
    body_nconsts: int,
) -> list[Any]:
    params = {
        "cond_nconsts": cond_nconsts,
        "cond_jaxpr": cond_jaxpr,
        "body_nconsts": body_nconsts,
        "body_jaxpr": body_jaxpr,
    }
    nc, nb = cond_nconsts, body_nconsts
    unknowns = [trace.is_unknown(a) for a in args]
    cconst_uk, bconst_uk, carry_uk = unknowns[:nc], unknowns[nc : nc + nb], unknowns[nc + nb :]
    for _ in range(1 + len(carry_uk)):
        body_known, _, carry_out_uk, _ = partial_eval_jaxpr_nounits(
            body_jaxpr, bconst_uk + carry_uk, instantiate=carry_uk
        )
        if carry_out_uk == carry_uk:
            break
        carry_uk = [a or b for a, b in zip(carry_uk, carry_out_uk, strict=True)]
    else:
        raise AssertionError("while partial evaluation: no fixpoint of the unknown carries")
    cond_known, _, (pred_uk,), _ = partial_eval_jaxpr_nounits(
        cond_jaxpr, cconst_uk + carry_uk, instantiate=False
    )
    staged: list[Any] = list(trace.bind_unknown(while_p, args, params))
    if pred_uk or not any(unknowns) or all(unknowns):
        return staged
    known_ins = [a for a, uk in zip(args, cconst_uk + bconst_uk + carry_uk, strict=True) if not uk]
    n_known = len(carry_uk) - sum(carry_uk)
    body_outs = body_known.jaxpr
    body_known = ClosedJaxpr(
        body_outs.replace(outvars=body_outs.outvars[:n_known]), body_known.consts
    )
    known_outs = iter(
        trace.bind_known(
            while_p,
            known_ins,
            {
                "cond_nconsts": nc - sum(cconst_uk),
                "cond_jaxpr": cond_known,
                "body_nconsts": nb - sum(bconst_uk),
                "body_jaxpr": body_known,
            },
        )
    )
    return [s if uk else next(known_outs) for s, uk in zip(staged, carry_uk, strict=True)]


partial_eval_rules.set(while_p, _while_partial_eval)


def _nothing_saveable(*_: Any, **__: Any) -> bool:
    return False


def _while_partial_eval_custom(
    saveable: Callable[..., Any], unks_in: Sequence[bool], inst_in: Sequence[bool], eqn: JaxprEqn
) -> tuple[JaxprEqn | None, JaxprEqn | None, Sequence[bool], Sequence[bool], list[Var]]:
    """The jaxpr-level split (JAX's `_while_partial_eval_custom`, met by `checkpoint`): a
    loop over the known part of the body runs on the known side (its writes to known Refs
    happen there), and the whole loop is staged again; nothing is saved."""
    del saveable
    params = eqn.params
    cond: ClosedJaxpr = params["cond_jaxpr"]
    body: ClosedJaxpr = params["body_jaxpr"]
    nc, nb = params["cond_nconsts"], params["body_nconsts"]
    cconst_uk, bconst_uk = list(unks_in[:nc]), list(unks_in[nc : nc + nb])
    carry_uk = list(unks_in[nc + nb :])
    new_inst = [x for x, inst in zip(eqn.invars, inst_in, strict=True)
                if isinstance(x, Var) and not inst]  # fmt: skip
    for _ in range(1 + len(carry_uk)):
        body_known, _, carry_out_uk, _, _ = partial_eval_jaxpr_custom(
            body.jaxpr, (*bconst_uk, *carry_uk), True, tuple(carry_uk), True, _nothing_saveable
        )
        if carry_out_uk == carry_uk:
            break
        carry_uk = [a or b for a, b in zip(carry_uk, carry_out_uk, strict=True)]
    else:
        raise AssertionError("while partial evaluation: no fixpoint of the unknown carries")
    cond_known, _, (pred_uk,), _, _ = partial_eval_jaxpr_custom(
        cond.jaxpr, (*cconst_uk, *carry_uk), True, False, True, _nothing_saveable
    )
    all_unknown = [True] * len(carry_uk)
    if pred_uk:
        return None, eqn, all_unknown, all_unknown, new_inst
    # The staged loop recomputes everything: the known body's residual outputs go unused.
    n_known = len(carry_uk) - sum(carry_uk)
    body_k = ClosedJaxpr(body_known.replace(outvars=body_known.outvars[:n_known]), body.consts)
    cond_k = ClosedJaxpr(cond_known, cond.consts)
    unknown = [*cconst_uk, *bconst_uk, *carry_uk]
    known = JaxprEqn(
        tuple(x for x, u in zip(eqn.invars, unknown, strict=True) if not u),
        tuple(v for v, u in zip(eqn.outvars, carry_uk, strict=True) if not u),
        while_p,
        {
            "cond_nconsts": nc - sum(cconst_uk),
            "cond_jaxpr": cond_k,
            "body_nconsts": nb - sum(bconst_uk),
            "body_jaxpr": body_k,
        },
        cond_k.effects | body_k.effects,
        eqn.source_info,
    )
    return known, eqn, list(carry_uk), all_unknown, new_inst


partial_eval_jaxpr_custom_rules.set(while_p, _while_partial_eval_custom)


def _while_transpose(*_: Any, **__: Any) -> list[Any]:
    raise ValueError(
        "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
        "dynamic start/stop values. Try using lax.scan, or using fori_loop with static "
        "start/stop."
    )


transpose_rules.set(while_p, _while_transpose)
