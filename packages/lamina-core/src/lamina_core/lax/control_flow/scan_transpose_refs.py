"""Transposition of a `scan` over tangent Refs, as JAX's: the transposed scan takes the
cotangent Refs of the Refs among the consts (as consts) and among the `xs` (as `xs`) and adds
into them in place, while the cotangents of the other linear consts and of the carries are
its carry, as for a scan without Refs (`scan_reverse`).

The body's binders are brought to `[ires, Ref consts, other linear consts, carries, Ref xs,
other linear xs, eres]`; the transposed step is `[ires, ct Ref consts, ct consts, ct carry,
ct Ref xs, ct ys, eres] -> [ct consts, ct carry, ct xs]`.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from lamina_core.interpreters import (
    RefAccum,
    ValAccum,
    Zero,
    backward_pass_accums,
    fancy_transpose_rules,
    instantiate_zeros,
    is_accum,
    ref_transposition,
    trace_to_jaxpr,
    zeros_like_aval,
)
from lamina_core.ir import AbstractValue, ClosedJaxpr
from lamina_core.lax.control_flow.common import memo
from lamina_core.lax.control_flow.scan import scan_p
from lamina_core.trace import typeof

_cache: weakref.WeakKeyDictionary[Any, dict[Any, Any]] = weakref.WeakKeyDictionary()


def _transpose_body(
    body: ClosedJaxpr,
    counts: tuple[int, ...],
    ys_nonzero: tuple[bool, ...],
    trans_avals: tuple[AbstractValue, ...],
) -> ClosedJaxpr:
    n_ires, n_cmut, n_cpure, n_carry, n_xmut, n_xpure = counts
    n_ys = sum(ys_nonzero)

    def make() -> ClosedJaxpr:
        xs_avals = body.in_avals[n_ires + n_cmut + n_cpure + n_carry + n_xmut :][:n_xpure]

        def fun(*args: Any) -> list[Any]:
            it = iter(args)

            def take(n: int) -> list[Any]:
                return [next(it) for _ in range(n)]

            ires, cmut, cpure, ct_carry, xmut, ct_ys_nz = (
                take(n_ires), take(n_cmut), take(n_cpure), take(n_carry), take(n_xmut),
                take(n_ys),
            )  # fmt: skip
            eres = list(it)
            nz = iter(ct_ys_nz)
            ct_ys = [
                next(nz) if nonzero else Zero(a.to_tangent_aval())
                for a, nonzero in zip(body.out_avals[n_carry:], ys_nonzero, strict=True)
            ]
            refs = [RefAccum(ref_transposition.inner_aval(typeof(r)), r) for r in (*cmut, *xmut)]
            consts_acc = [ValAccum(typeof(c), c) for c in cpure]
            carry_acc = [ValAccum(typeof(c)) for c in ct_carry]
            xs_acc = [ValAccum(a) for a in xs_avals]
            primals = [
                *ires, *refs[:n_cmut], *consts_acc, *carry_acc, *refs[n_cmut:], *xs_acc, *eres,
            ]  # fmt: skip
            backward_pass_accums(body.jaxpr, body.consts, primals, [*ct_carry, *ct_ys])
            return [instantiate_zeros(a.freeze()) for a in (*consts_acc, *carry_acc, *xs_acc)]

        return trace_to_jaxpr(fun, trans_avals, body.jaxpr.debug_info)

    result: ClosedJaxpr = memo(_cache, body, (counts, ys_nonzero, trans_avals), make)
    return result


def _scan_transpose_refs(
    cts: Sequence[Any],
    *args: Any,
    reverse: bool,
    length: int,
    jaxpr: ClosedJaxpr,
    num_consts: int,
    num_carry: int,
    unroll: int,
) -> None:
    head = num_consts + num_carry

    def kinds(lo: int, hi: int) -> tuple[list[int], list[int], list[int]]:
        idx = range(lo, hi)
        plain = [i for i in idx if not is_accum(args[i])]
        mut = [i for i in idx if type(args[i]) is RefAccum]
        pure = [i for i in idx if is_accum(args[i]) and type(args[i]) is not RefAccum]
        return plain, mut, pure

    ires_i, cmut_i, cpure_i = kinds(0, num_consts)
    eres_i, xmut_i, xpure_i = kinds(head, len(args))
    carry_i = list(range(num_consts, head))
    order = [*ires_i, *cmut_i, *cpure_i, *carry_i, *xmut_i, *xpure_i, *eres_i]
    j = jaxpr.jaxpr
    body = ClosedJaxpr(j.replace(invars=tuple(j.invars[i] for i in order)), jaxpr.consts)

    ct_carry = [instantiate_zeros(c) for c in cts[:num_carry]]
    ct_cpure = [zeros_like_aval(jaxpr.in_avals[i].to_tangent_aval()) for i in cpure_i]
    cmut = [args[i].inst().ref for i in cmut_i]
    xmut = [args[i].inst().ref for i in xmut_i]
    ct_ys = [c for c in cts[num_carry:] if type(c) is not Zero]
    ys_nonzero = tuple(type(c) is not Zero for c in cts[num_carry:])
    ires = [args[i] for i in ires_i]
    eres = [args[i] for i in eres_i]
    intensive = [*ires, *cmut, *ct_cpure, *ct_carry]
    extensive = [*xmut, *ct_ys, *eres]
    trans_avals = (
        *(typeof(x) for x in intensive),
        *(typeof(x).dec_rank(length, typeof(x).leading_axis_spec()) for x in extensive),
    )
    counts = (len(ires), len(cmut), len(ct_cpure), num_carry, len(xmut), len(xpure_i))
    transposed = _transpose_body(body, counts, ys_nonzero, trans_avals)
    outs = scan_p.bind(
        *intensive, *extensive, reverse=not reverse, length=length, jaxpr=transposed,
        num_consts=len(ires) + len(cmut), num_carry=len(ct_cpure) + num_carry, unroll=unroll,
    )  # fmt: skip
    for i, ct in zip([*cpure_i, *carry_i, *xpure_i], outs, strict=True):
        if is_accum(args[i]):
            args[i].add(ct)


fancy_transpose_rules.set(scan_p, _scan_transpose_refs)
