"""Transposition of a `jit` call reading or writing tangent Refs, as JAX's: the transposed
call takes the cotangent Refs of its Ref arguments (made now if no cotangent has reached
them yet) with its other non-linear arguments, then the nonzero output cotangents, adds into
those Refs in place and returns the nonzero cotangents of its linear value arguments."""

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
    is_accum,
    ref_transposition,
    trace_to_jaxpr,
)
from lamina_core.ir import AbstractValue, ClosedJaxpr
from lamina_core.trace import typeof
from lamina_core.transforms._call import jit_p
from lamina_core.transforms._call_ad import _cached, _rebind_params

_cache: weakref.WeakKeyDictionary[Any, dict[Any, Any]] = weakref.WeakKeyDictionary()

_VALUE, _REF, _PLAIN = 0, 1, 2


def _transpose_call_jaxpr(
    closed: ClosedJaxpr,
    kinds: tuple[int, ...],
    in_avals: tuple[AbstractValue, ...],
    ct_nonzero: tuple[bool, ...],
) -> tuple[ClosedJaxpr, list[bool]]:
    """`[*Refs and plain args, *nonzero cts] -> nonzero cts of the value args`, and which of
    the value args have one."""

    def make() -> tuple[ClosedJaxpr, list[bool]]:
        nonzero: list[bool] = []
        n_args = sum(k != _VALUE for k in kinds)

        def fun(*flat: Any) -> list[Any]:
            given, cts_it = iter(flat[:n_args]), iter(flat[n_args:])
            args: list[Any] = []
            for kind, aval in zip(kinds, closed.in_avals, strict=True):
                if kind == _VALUE:
                    args.append(ValAccum(aval.to_tangent_aval()))
                elif kind == _REF:
                    ref = next(given)
                    args.append(RefAccum(ref_transposition.inner_aval(typeof(ref)), ref))
                else:
                    args.append(next(given))
            cts = [
                next(cts_it) if nz else Zero(o.to_tangent_aval())
                for o, nz in zip(closed.out_avals, ct_nonzero, strict=True)
            ]
            backward_pass_accums(closed.jaxpr, closed.consts, args, cts)
            outs = [a.freeze() for a, k in zip(args, kinds, strict=True) if k == _VALUE]
            nonzero.extend(type(c) is not Zero for c in outs)
            return [c for c in outs if type(c) is not Zero]

        jaxpr = trace_to_jaxpr(fun, in_avals, closed.jaxpr.debug_info)
        return jaxpr, nonzero

    result: tuple[ClosedJaxpr, list[bool]] = _cached(
        _cache, closed, (kinds, in_avals, ct_nonzero), make
    )
    return result


def _jit_transpose_refs(cts: Sequence[Any], *args: Any, **params: Any) -> None:
    closed: ClosedJaxpr = params["jaxpr"]
    kinds = tuple(_REF if type(a) is RefAccum else _VALUE if is_accum(a) else _PLAIN for a in args)
    given = [a.inst().ref if k == _REF else a for a, k in zip(args, kinds, strict=True)]
    given = [g for g, k in zip(given, kinds, strict=True) if k != _VALUE]
    nz_cts = [c for c in cts if type(c) is not Zero]
    ct_nonzero = tuple(type(c) is not Zero for c in cts)
    in_avals = tuple(typeof(x) for x in (*given, *nz_cts))
    jaxpr, nonzero = _transpose_call_jaxpr(closed, kinds, in_avals, ct_nonzero)
    outs = iter(jit_p.bind(*given, *nz_cts, **_rebind_params(params, jaxpr)))
    value_args = [a for a, k in zip(args, kinds, strict=True) if k == _VALUE]
    for a, nz in zip(value_args, nonzero, strict=True):
        if nz:
            a.add(next(outs))


fancy_transpose_rules.set(jit_p, _jit_transpose_refs)
