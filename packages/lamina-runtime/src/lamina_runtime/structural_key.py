"""Keys of equation params that hold jaxprs, by structure rather than identity.

A control-flow primitive applied eagerly carries its body as a jaxpr; a Python function
calling `lax.scan(lambda c, x: ..., ...)` traces a new body (a new jaxpr object) every call.
Keyed by identity, every such call would lower its program again; keyed by structure (the
equations, their params, the types, scalar literals by value and array literals by identity),
equal bodies share one compiled program.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from typing import Any, Final

from lamina_core.ir import ClosedJaxpr, Jaxpr, Literal, Var


class _Same:
    """An unhashable or array value in a key: equal only to itself (and kept alive by the key,
    so its id is not reused meanwhile)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __hash__(self) -> int:
        return id(self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.value is self.value


def _value(v: Any) -> Hashable:
    if isinstance(v, ClosedJaxpr):
        return ("closed", jaxpr_key(v.jaxpr), tuple(_Same(c) for c in v.consts))
    if isinstance(v, Jaxpr):
        return ("jaxpr", jaxpr_key(v))
    if type(v) is tuple:
        return tuple(_value(x) for x in v)
    try:
        hash(v)
    except TypeError:
        return _Same(v)
    return v  # type: ignore[no-any-return]


def params_key(params: Mapping[str, Any]) -> Hashable:
    """`params` as a hashable key: jaxprs by structure, everything else by value."""
    return tuple((k, _value(v)) for k, v in params.items())


def holds_jaxprs(params: Mapping[str, Any]) -> bool:
    for v in params.values():
        if isinstance(v, (Jaxpr, ClosedJaxpr)):
            return True
        if type(v) is tuple and v and isinstance(v[0], (Jaxpr, ClosedJaxpr)):
            return True
    return False


_KNOWN: Final[OrderedDict[int, tuple[Jaxpr, Hashable]]] = OrderedDict()
"""Keys already computed, by jaxpr identity (the jaxpr is held, so its id stays its own): a
jitted function called eagerly brings the same cached jaxpr every call, and walking it each
time cost more than running it."""
_KNOWN_MAX: Final = 4096


_KNOWN_LOCK: Final = threading.RLock()
"""Threads share `_KNOWN`: an `OrderedDict` changed by two at once can crash the process (a
collection run mid-operation may switch threads); see `LRUCache`."""


def jaxpr_key(jaxpr: Jaxpr) -> Hashable:
    """The structure of `jaxpr`: two jaxprs with equal keys compute the same function."""
    with _KNOWN_LOCK:
        known = _KNOWN.get(id(jaxpr))
        if known is not None and known[0] is jaxpr:
            _KNOWN.move_to_end(id(jaxpr))
            return known[1]
    key = _structure(jaxpr)
    with _KNOWN_LOCK:
        _KNOWN[id(jaxpr)] = (jaxpr, key)
        if len(_KNOWN) > _KNOWN_MAX:
            _KNOWN.popitem(last=False)
    return key


def _structure(jaxpr: Jaxpr) -> Hashable:
    numbers: dict[Var, int] = {}

    def var(v: Var) -> int:
        return numbers.setdefault(v, len(numbers))

    def atom(a: Any) -> Hashable:
        if isinstance(a, Literal):
            if a.is_scalar:
                return ("lit", type(a.val), repr(a.val), a.aval)
            return ("lit", _Same(a.val), a.aval)
        return var(a)

    head = (
        tuple((var(v), v.aval) for v in jaxpr.constvars),
        tuple((var(v), v.aval) for v in jaxpr.invars),
    )
    eqns = tuple(
        (
            e.primitive,
            params_key(e.params),
            tuple(atom(a) for a in e.invars),
            tuple((var(v), v.aval) for v in e.outvars),
            e.effects,
        )
        for e in jaxpr.eqns
    )
    return (head, eqns, tuple(atom(a) for a in jaxpr.outvars))
