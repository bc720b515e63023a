"""Transposition of linear programs that keep tangent Refs, as JAX's: the cotangent of a
tangent Ref is itself a Ref (`RefAccum`), made when its first cotangent arrives; a read
transposes to an add into it, a write to a swap out of it, and a `scan` over tangent Refs to
a reverse scan over their cotangent Refs.

A linear program whose Refs are all made inside it, and used only by reads, writes, `scan`s
and `jit` calls, is transposed so (`transposes_in_place`); any other is discharged to values
first (`_ad.discharge_internal`).
"""

from __future__ import annotations

import weakref
from typing import Any

from lamina_core.interpreters import (
    RefAccum,
    Zero,
    fancy_transpose_rules,
    instantiate_zeros,
    is_accum,
    ref_transposition,
)
from lamina_core.ir import AbstractValue, Jaxpr, JaxprEqn, Var, jaxprs_in_params
from lamina_core.lax import scan_p
from lamina_core.transforms import jit_p
from lamina_refs._discharge import has_refs
from lamina_refs._primitives import (
    REF_PRIMITIVES,
    addupdate_p,
    empty_ref_p,
    freeze_p,
    get_p,
    new_ref_p,
    swap_p,
)
from lamina_refs._types import AbstractRef, RefEffect

_ACCESSES = frozenset({get_p, swap_p, addupdate_p})
_MAKERS = frozenset({new_ref_p, empty_ref_p, freeze_p})

_in_place: dict[bool, weakref.WeakKeyDictionary[Jaxpr, bool]] = {
    True: weakref.WeakKeyDictionary(),
    False: weakref.WeakKeyDictionary(),
}


def transposes_in_place(jaxpr: Jaxpr, *, top: bool = True) -> bool:
    """Whether the backward pass can keep `jaxpr`'s tangent Refs as Refs: at the top, it takes
    no Refs and makes them itself; in a `scan` body, it makes none; every equation touching a
    Ref reads or writes it, or is a `scan` whose body qualifies."""
    known = _in_place[top].get(jaxpr)
    if known is None:
        known = _in_place[top][jaxpr] = _qualifies(jaxpr, top)
    return known


def _qualifies(jaxpr: Jaxpr, top: bool) -> bool:
    if top and any(v.aval.mutable for v in (*jaxpr.constvars, *jaxpr.invars)):
        return False
    for eqn in jaxpr.eqns:
        if eqn.primitive is scan_p or eqn.primitive is jit_p:
            if not transposes_in_place(eqn.params["jaxpr"].jaxpr, top=False):
                return False
        elif eqn.primitive in _ACCESSES:
            continue
        elif eqn.primitive in _MAKERS:
            if not top:
                return False
        elif _touches_refs(eqn):
            return False
    return True


def _touches_refs(eqn: JaxprEqn) -> bool:
    return (
        eqn.primitive in REF_PRIMITIVES
        or any(isinstance(v, Var) and v.aval.mutable for v in eqn.invars)
        or any(v.aval.mutable for v in eqn.outvars)
        or any(isinstance(e, RefEffect) for e in eqn.effects)
        or any(has_refs(j) for j in jaxprs_in_params(eqn.params))
    )


def _inner_aval(aval: AbstractValue) -> AbstractValue:
    assert isinstance(aval, AbstractRef)
    return aval.inner_aval


def _add_into(ref: Any, ct: Any) -> None:
    addupdate_p.bind(ref, ct, tree=())


ref_transposition.creators.update({new_ref_p: "new", empty_ref_p: "empty", freeze_p: "freeze"})
ref_transposition.new_ref = lambda x: new_ref_p.bind(x, kind=None, memory_space=None)
ref_transposition.addupdate = _add_into
ref_transposition.freeze = freeze_p.bind
ref_transposition.inner_aval = _inner_aval


def _get_transpose(ct: Any, ref: RefAccum, *idx: Any, tree: Any) -> None:
    if tree and type(ct) is not Zero:
        addupdate_p.bind(ref.inst().ref, ct, *idx, tree=tree)
    else:
        ref.add(ct)


def _swap_transpose(ct: Any, ref: RefAccum, x: Any, *idx: Any, **params: Any) -> None:
    if ref.ref is None and type(ct) is Zero:
        return
    if ref.ref is None:
        swap_p.bind(ref.inst().ref, instantiate_zeros(ct), *idx, **params)
        return
    x_ct = swap_p.bind(ref.ref, instantiate_zeros(ct), *idx, **params)
    if is_accum(x):
        x.add(x_ct)


def _addupdate_transpose(cts: Any, ref: RefAccum, x: Any, *idx: Any, **params: Any) -> None:
    if ref.ref is not None and is_accum(x):
        x.add(get_p.bind(ref.ref, *idx, **params))


fancy_transpose_rules.set(get_p, _get_transpose)
fancy_transpose_rules.set(swap_p, _swap_transpose)
fancy_transpose_rules.set(addupdate_p, _addupdate_transpose)
