"""Forward mode (jvp) of the control-flow primitives, as JAX's rules.

`cond` differentiates every branch with the same nonzero pattern (an output's tangent is
nonzero if it is in any branch). `scan` and `while` find by fixpoint which carries have a
nonzero tangent, then run one loop over primals and tangents: the jvp'd body's binders are
rearranged to `[consts, const tangents, carry, carry tangents, xs, xs tangents]`.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from lamina_core.interpreters import Zero, instantiate_zeros, is_float0, jvp_rules
from lamina_core.ir import ClosedJaxpr, Var
from lamina_core.lax.control_flow.conditionals import cond_p
from lamina_core.lax.control_flow.loops import while_p
from lamina_core.lax.control_flow.scan import scan_p
from lamina_core.trace import typeof
from lamina_core.transforms import jvp_jaxpr, split_jvp_outs


def _nonzero(t: Any) -> bool:
    return type(t) is not Zero and not is_float0(typeof(t))


def _perm(
    primal_counts: Sequence[int], tangent_counts: Sequence[int], items: Sequence[Any]
) -> list[Any]:
    """Interleave groups: `[p0, t0, p1, t1, ...]` from `[p0, p1, ..., t0, t1, ...]`."""
    n = sum(primal_counts)
    primals, tangents = list(items[:n]), list(items[n:])
    out: list[Any] = []
    for np_, nt in zip(primal_counts, tangent_counts, strict=True):
        out += primals[:np_] + tangents[:nt]
        primals, tangents = primals[np_:], tangents[nt:]
    return out


_rearrange_cache: weakref.WeakKeyDictionary[ClosedJaxpr, dict[Any, ClosedJaxpr]] = (
    weakref.WeakKeyDictionary()
)


def rearrange_binders(
    closed: ClosedJaxpr,
    primals_in: Sequence[int],
    tangents_in: Sequence[int],
    primals_out: Sequence[int],
    tangents_out: Sequence[int],
) -> ClosedJaxpr:
    """A jvp'd jaxpr's binders and outputs regrouped primal/tangent by group (JAX's)."""
    entries = _rearrange_cache.setdefault(closed, {})
    key = (tuple(primals_in), tuple(tangents_in), tuple(primals_out), tuple(tangents_out))
    found = entries.get(key)
    if found is None:
        j = closed.jaxpr
        found = entries[key] = ClosedJaxpr(
            j.replace(
                invars=tuple(_perm(primals_in, tangents_in, j.invars)),
                outvars=tuple(_perm(primals_out, tangents_out, j.outvars)),
            ),
            closed.consts,
        )
    return found


def _cond_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, branches: tuple[ClosedJaxpr, ...]
) -> tuple[list[Any], list[Any]]:
    ops_nz = tuple(_nonzero(t) for t in tangents[1:])
    per_branch = [jvp_jaxpr(b, ops_nz)[1] for b in branches]
    out_nz = tuple(any(col) for col in zip(*per_branch, strict=True))
    jvp_branches = tuple(jvp_jaxpr(b, ops_nz, out_nz)[0] for b in branches)
    index, *ops = primals
    dots = [t for t, nz in zip(tangents[1:], ops_nz, strict=True) if nz]
    outs = cond_p.bind(index, *ops, *dots, branches=jvp_branches)
    primals_out, tangents_out = split_jvp_outs(outs, out_nz)
    return list(primals_out), tangents_out


jvp_rules.set(cond_p, _cond_jvp)


def _carry_fixpoint(
    body: ClosedJaxpr,
    before: list[bool],
    carry_nz: list[bool],
    after: list[bool],
    n_carry: int,
    n_extra_out: int,
) -> tuple[ClosedJaxpr, list[bool], list[bool]]:
    """Promote carries to nonzero until the body's carry tangents agree with them."""
    for _ in range(1 + len(carry_nz)):
        nonzeros = tuple(before + carry_nz + after)
        jvp, out_nz = jvp_jaxpr(body, nonzeros, tuple(carry_nz + [False] * n_extra_out))
        if out_nz[:n_carry] == carry_nz:
            return jvp, list(nonzeros), out_nz
        carry_nz = [a or b for a, b in zip(carry_nz, out_nz[:n_carry], strict=True)]
    raise AssertionError("control-flow jvp: no fixpoint of the nonzero carries")


def _scan_jvp(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    reverse: bool,
    length: int,
    jaxpr: ClosedJaxpr,
    num_consts: int,
    num_carry: int,
    unroll: int,
) -> tuple[list[Any], list[Any]]:
    num_xs = len(jaxpr.in_avals) - num_consts - num_carry
    num_ys = len(jaxpr.out_avals) - num_carry
    nz = [_nonzero(t) for t in tangents]
    head = num_consts + num_carry
    jvp, nonzeros, out_nz = _carry_fixpoint(
        jaxpr, nz[:num_consts], nz[num_consts:head], nz[head:], num_carry, num_ys
    )
    tangents = [instantiate_zeros(t) if n else t for t, n in zip(tangents, nonzeros, strict=True)]
    groups = [(0, num_consts), (num_consts, head), (head, len(primals))]
    dots = [[t for t, n in zip(tangents[a:b], nonzeros[a:b], strict=True) if n] for a, b in groups]
    n_init_dot = len(dots[1])
    body = rearrange_binders(
        jvp,
        [num_consts, num_carry, num_xs],
        [len(d) for d in dots],
        [num_carry, num_ys],
        [n_init_dot, sum(out_nz) - n_init_dot],
    )
    args = [x for (a, b), d in zip(groups, dots, strict=True) for x in (*primals[a:b], *d)]
    outs = scan_p.bind(
        *args, reverse=reverse, length=length, jaxpr=body,
        num_consts=num_consts + len(dots[0]), num_carry=num_carry + n_init_dot, unroll=unroll,
    )  # fmt: skip
    carry = outs[:num_carry]
    carry_dot = outs[num_carry : num_carry + n_init_dot]
    ys = outs[num_carry + n_init_dot : num_carry + n_init_dot + num_ys]
    ys_dot = outs[num_carry + n_init_dot + num_ys :]
    primals_out, tangents_out = split_jvp_outs([*carry, *ys, *carry_dot, *ys_dot], out_nz)
    return list(primals_out), tangents_out


jvp_rules.set(scan_p, _scan_jvp)


_augment_cache: weakref.WeakKeyDictionary[ClosedJaxpr, dict[Any, ClosedJaxpr]] = (
    weakref.WeakKeyDictionary()
)


def _with_unused_inputs(closed: ClosedJaxpr, avals: tuple[Any, ...]) -> ClosedJaxpr:
    """The predicate taking the carry tangents too (and ignoring them)."""
    entries = _augment_cache.setdefault(closed, {})
    found = entries.get(avals)
    if found is None:
        j = closed.jaxpr
        found = entries[avals] = ClosedJaxpr(
            j.replace(invars=(*j.invars, *(Var(a) for a in avals))), closed.consts
        )
    return found


def _while_jvp(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    cond_jaxpr: ClosedJaxpr,
    body_jaxpr: ClosedJaxpr,
    cond_nconsts: int,
    body_nconsts: int,
) -> tuple[list[Any], list[Any]]:
    nc, nb = cond_nconsts, body_nconsts
    nz = [_nonzero(t) for t in tangents]
    num_carry = len(primals) - nc - nb
    body_jvp, body_nonzeros, out_nz = _carry_fixpoint(
        body_jaxpr, nz[nc : nc + nb], nz[nc + nb :], [], num_carry, 0
    )
    nonzeros = nz[:nc] + body_nonzeros
    tangents = [instantiate_zeros(t) if n else t for t, n in zip(tangents, nonzeros, strict=True)]
    bconst_dot = [
        t for t, n in zip(tangents[nc : nc + nb], nonzeros[nc : nc + nb], strict=True) if n
    ]
    init_dot = [t for t, n in zip(tangents[nc + nb :], nonzeros[nc + nb :], strict=True) if n]
    body = rearrange_binders(
        body_jvp, [nb, num_carry], [len(bconst_dot), len(init_dot)], [num_carry], [len(init_dot)]
    )
    cond = _with_unused_inputs(cond_jaxpr, tuple(typeof(t) for t in init_dot))
    outs = while_p.bind(
        *primals[:nc], *primals[nc : nc + nb], *bconst_dot, *primals[nc + nb :], *init_dot,
        cond_nconsts=nc, cond_jaxpr=cond, body_nconsts=nb + len(bconst_dot), body_jaxpr=body,
    )  # fmt: skip
    carry, tangents_out = split_jvp_outs(outs, out_nz)
    return list(carry), tangents_out


jvp_rules.set(while_p, _while_jvp)

__all__ = ["rearrange_binders"]
