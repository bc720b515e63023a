"""Differentiation of the Ref primitives, as JAX's (`jvp`, linearization, transposition).

A Ref made under differentiation gets a tangent Ref, even from a constant initial value: what
is written into it later may depend on the inputs (`new_ref` is differentiated always). Reads
and writes act on the primal and tangent Refs alike; writing a differentiated value into a Ref
that has no tangent (one the differentiated function did not create or take) is JAX's error.
Reverse mode keeps a linear program's tangent Refs as Refs, as JAX does, where `_transpose`
has rules for every use of them; otherwise they are discharged into values first
(`transpose_preparers`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lamina_core.interpreters import (
    Zero,
    differentiated_always,
    instantiate_zeros,
    jvp_rules,
    linearization_rules,
    transpose_preparers,
)
from lamina_core.ir import Jaxpr
from lamina_core.trace import typeof
from lamina_refs._discharge import discharge_state, has_refs
from lamina_refs._primitives import (
    addupdate_p,
    empty_ref_p,
    free_ref_p,
    freeze_p,
    get_p,
    new_ref_p,
    swap_p,
)
from lamina_refs._transpose import transposes_in_place
from lamina_refs._types import AbstractRef

NO_GRAD = "no_grad_no_remat"


def _zero_like(x: Any) -> Zero:
    return Zero(typeof(x).to_tangent_aval())


def _new_ref_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, kind: str | None, memory_space: Any
) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    out = new_ref_p.bind(x, kind=kind, memory_space=memory_space)
    if kind == NO_GRAD:
        return out, _zero_like(out)
    return out, new_ref_p.bind(instantiate_zeros(t), kind=kind, memory_space=memory_space)


def _new_ref_linearization(
    nonzeros: Sequence[bool], x: Any, *, kind: str | None, memory_space: Any
) -> tuple[Any, bool, list[Any], Any]:
    out = new_ref_p.bind(x, kind=kind, memory_space=memory_space)

    def linearized(residuals: Sequence[Any], t: Any) -> Any:
        if kind == NO_GRAD:
            return Zero(AbstractRef(typeof(x).to_tangent_aval(), memory_space, kind))
        # Under the tangent trace: the tangent Ref lives in the linear program.
        return new_ref_p.bind(instantiate_zeros(t), kind=kind, memory_space=memory_space)

    return out, kind != NO_GRAD, [], linearized


def _empty_ref_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, ty: Any, memory_space: Any
) -> tuple[Any, Any]:
    out = empty_ref_p.bind(ty=ty, memory_space=memory_space)
    return out, empty_ref_p.bind(ty=ty.to_tangent_aval(), memory_space=memory_space)


def _empty_ref_linearization(
    nonzeros: Sequence[bool], *, ty: Any, memory_space: Any
) -> tuple[Any, bool, list[Any], Any]:
    out = empty_ref_p.bind(ty=ty, memory_space=memory_space)

    def linearized(residuals: Sequence[Any]) -> Any:
        return empty_ref_p.bind(ty=ty.to_tangent_aval(), memory_space=memory_space)

    return out, True, [], linearized


def _free_ref_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    free_ref_p.bind(primals[0])
    if type(tangents[0]) is not Zero:
        free_ref_p.bind(tangents[0])
    return [], []


def _freeze_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    (ref,), (t,) = primals, tangents
    out = freeze_p.bind(ref)
    return out, _zero_like(out) if type(t) is Zero else freeze_p.bind(t)


def _get_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
    ref, *idx = primals
    out = get_p.bind(ref, *idx, **params)
    t = tangents[0]
    return out, _zero_like(out) if type(t) is Zero else get_p.bind(t, *idx, **params)


def _swap_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
    ref, x, *idx = primals
    ref_t, x_t = tangents[0], tangents[1]
    out = swap_p.bind(ref, x, *idx, **params)
    if type(ref_t) is Zero and type(x_t) is Zero:
        return out, _zero_like(out)
    if getattr(typeof(ref), "kind", None) == NO_GRAD:
        return out, _zero_like(out)
    if type(ref_t) is Zero:
        raise Exception(
            "performing a set/swap operation with a differentiated value on a "
            "non-differentiated array reference of type "
            f"{typeof(ref).str_short(short_dtypes=False)}. Move the array reference to be an "
            "argument of the differentiated function?"
        )
    return out, swap_p.bind(ref_t, instantiate_zeros(x_t), *idx, **params)


def _addupdate_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], **params: Any
) -> tuple[list[Any], list[Any]]:
    ref, x, *idx = primals
    ref_t, x_t = tangents[0], tangents[1]
    addupdate_p.bind(ref, x, *idx, **params)
    if getattr(typeof(ref), "kind", None) == NO_GRAD or (type(ref_t) is Zero and type(x_t) is Zero):
        return [], []
    if type(ref_t) is Zero:
        raise Exception(
            "performing an addupdate operation with a differentiated value on a "
            "non-differentiated array reference of type "
            f"{typeof(ref).str_short(short_dtypes=False)}. Move the array reference to be an "
            "argument of the differentiated function?"
        )
    addupdate_p.bind(ref_t, instantiate_zeros(x_t), *idx, **params)
    return [], []


differentiated_always.add(new_ref_p)
differentiated_always.add(empty_ref_p)
jvp_rules.set(empty_ref_p, _empty_ref_jvp)
linearization_rules.set(empty_ref_p, _empty_ref_linearization)
jvp_rules.set(free_ref_p, _free_ref_jvp)
jvp_rules.set(new_ref_p, _new_ref_jvp)
linearization_rules.set(new_ref_p, _new_ref_linearization)
jvp_rules.set(freeze_p, _freeze_jvp)
jvp_rules.set(get_p, _get_jvp)
jvp_rules.set(swap_p, _swap_jvp)
jvp_rules.set(addupdate_p, _addupdate_jvp)


def discharge_internal(jaxpr: Jaxpr) -> Jaxpr:
    """`jaxpr` with the Refs it creates inside replaced by values; Refs among its inputs and
    constvars (a `custom_vjp`'s residual Ref, which its bwd writes) stay Refs."""
    if not has_refs(jaxpr) or transposes_in_place(jaxpr):
        return jaxpr
    k = len(jaxpr.constvars)
    opened = jaxpr.replace(constvars=(), invars=(*jaxpr.constvars, *jaxpr.invars))
    out = discharge_state(opened, inputs=False)
    return out.replace(constvars=out.invars[:k], invars=out.invars[k:])


transpose_preparers.append(discharge_internal)
