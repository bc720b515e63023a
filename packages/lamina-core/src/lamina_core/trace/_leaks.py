"""Leak checking (`jax_check_tracer_leaks`, `jax.checking_leaks`): once a trace is done, no
tracer of it may still be reachable, or a later use would meet a value of a finished trace.

Checking walks the garbage collector's referrers, which is slow: it runs only when the option is
on, at the end of each staging and batching trace (`check_no_leaks`).
"""

from __future__ import annotations

import gc
import inspect
import types
from typing import Any, Final

from lamina_core.config import config
from lamina_core.trace._tracing import Trace, Tracer

check_tracer_leaks: Final = config.define_bool(
    "jax_check_tracer_leaks",
    False,
    "Turn on checking for leaked tracers as soon as a trace completes. Slow: every trace "
    "ends with a garbage collection and a search of the referrers of its tracers.",
)

_CHAIN_LIMIT: Final = 8


def checking_leaks() -> bool:
    """Whether leaks are checked here and now (cheap when the option was never set)."""
    return "jax_check_tracer_leaks" in config.touched and bool(check_tracer_leaks.value)


def _referrers(x: Any, ignore: set[int]) -> list[Any]:
    return [
        r for r in gc.get_referrers(x) if id(r) not in ignore and type(r) is not types.FrameType
    ]


def _holder(parent: Any, child: Any) -> str:
    """How `parent` holds `child`, for the chain in the message (JAX's wording)."""
    name = f"<{type(parent).__name__} {id(parent)}>"
    if type(parent) is types.ModuleType:
        keys = [k for k, v in vars(parent).items() if v is child]
        return f"{parent.__name__}.{keys[0]}" if keys else parent.__name__
    if type(parent) is types.FunctionType:
        found = inspect.getclosurevars(parent)
        keys = [k for k, v in {**found.nonlocals, **found.globals}.items() if v is child]
        if len(keys) == 1:
            return f"{name} ({parent.__name__}) closed-over variable {keys[0]}"
    if isinstance(parent, (list, tuple)):
        index = next((i for i, v in enumerate(parent) if v is child), None)
        return f"{name}[{index}]" if index is not None else name
    if isinstance(parent, dict):
        keys = [k for k, v in parent.items() if v is child]
        return f"{name}[{keys[0]!r}]" if keys else name
    return name


def _first_referrer(x: Any, ignore: set[int]) -> Any:
    """One object referring to `x`, or None. (The list of them is dropped before returning:
    kept, it would refer to the next link of the chain itself.)"""
    parents = _referrers(x, ignore)
    return parents[0] if parents else None


def _namespace_owner(namespace: dict[str, Any], ignore: set[int]) -> Any:
    """The module or instance whose `__dict__` is `namespace`, or `namespace` itself.

    (A separate function: a comprehension naming a local of `_why_alive` would make that local
    a closure cell, itself a referrer of what the chain follows.)"""
    for owner in _referrers(namespace, ignore):
        if getattr(owner, "__dict__", None) is namespace:
            return owner
    return namespace


def _closure_owner(cell: Any, ignore: set[int]) -> Any:
    """The function whose closure holds `cell`, or `cell` if none is found."""
    for closure in _referrers(cell, ignore):
        for owner in _referrers(closure, ignore):
            if type(owner) is types.FunctionType and owner.__closure__ is closure:
                return owner
    return cell


def _why_alive(tracer: Tracer, ignore: set[int]) -> str:
    lines: list[str] = []
    child: Any = tracer
    seen: set[int] = set()
    while id(child) not in seen and len(lines) < _CHAIN_LIMIT:
        if type(child) is types.ModuleType:
            break
        parent = _first_referrer(child, ignore)
        if parent is None:
            break
        # A namespace or a closure cell is named by what owns it, as JAX names it.
        if isinstance(parent, dict):
            parent = _namespace_owner(parent, ignore)
        elif type(parent) is types.CellType:
            parent = _closure_owner(parent, ignore)
        kind = tracer.jax_name if child is tracer else type(child).__name__
        lines.append(f"<{kind} {id(child)}> is referred to by {_holder(parent, child)}")
        if type(parent) is types.CellType:  # its function was not found: the chain stops
            break
        seen.add(id(child))
        child = parent
    return "\n" + "\n".join(lines) if lines else ""


def check_no_leaks(trace: Trace, name: str) -> None:
    """Raise JAX's error if a tracer of the finished `trace` is still reachable.

    Args:
        trace: a trace that has just finished; the caller holds none of its tracers.
        name: the name JAX gives the trace's kind (`DynamicJaxprTrace`, `BatchTrace`).
    """
    gc.collect()  # what only a cycle keeps alive cannot be reached by the user's code
    tracers = [r for r in gc.get_referrers(trace) if isinstance(r, Tracer)]
    if not tracers:
        return
    ignore = {id(tracers)}
    parts = [f"{t!r}{t._origin_msg()}{_why_alive(t, ignore)}" for t in tracers]
    joined = "\n\n".join(parts)
    raise Exception(f"Leaked trace {name}. Leaked tracer(s):\n\n{joined}\n")
