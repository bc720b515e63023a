"""The aliasing rules of mutable values (Refs, seed 004), checked where functions are traced.

A mutable value may reach a traced function once: as one argument, or closed over, never both
and never twice; and it cannot be returned. These checks ask only the aval protocol
(`AbstractValue.mutable`), so core names no mutable type. The messages are JAX's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lamina_core.ir import AbstractValue, DebugInfo, Jaxpr
from lamina_core.trace._values import typeof


def _type(aval: AbstractValue) -> str:
    return aval.str_short(short_dtypes=False)


def _name(debug: DebugInfo | None, i: int) -> str:
    names = debug.arg_names if debug is not None else None
    return names[i] if names is not None and i < len(names) else "unknown"


def _referent(x: Any) -> int:
    return id(x)


def check_no_aliased_args(
    debug: DebugInfo | None, avals: Sequence[AbstractValue | None], args: Sequence[Any]
) -> None:
    """A mutable value passed as two arguments is an error (JAX's `err2`). An argument whose
    aval is None is not checked (`vmap`'s unmapped ones)."""
    seen: dict[int, int] = {}
    for i, (aval, x) in enumerate(zip(avals, args, strict=True)):
        if aval is None or not aval.mutable:
            continue
        first = seen.setdefault(_referent(x), i)
        if first == i:
            continue
        if debug is None:
            raise ValueError(
                "only one reference to a mutable array may be passed as an argument to a "
                f"function, but it appeared at both flat index {first} and flat index {i}."
            )
        raise ValueError(
            "only one reference to a mutable array may be passed as an argument to a function, "
            f"but when tracing {debug.func_src_info} for {debug.traced_for} the mutable array "
            f"reference of type {_type(aval)} appeared at both {_name(debug, first)} and "
            f"{_name(debug, i)}."
        )


def check_not_closed_over_and_passed(
    debug: DebugInfo | None, consts: Sequence[Any], args: Sequence[Any]
) -> None:
    """A mutable value both closed over and passed as an argument is an error (`err3`)."""
    closed = {_referent(c) for c in consts if typeof(c).mutable}
    if not closed:
        return
    for i, x in enumerate(args):
        if _referent(x) not in closed:
            continue
        where = (
            f"when tracing {debug.func_src_info} for {debug.traced_for}, "
            if debug is not None
            else ""
        )
        raise ValueError(
            f"{where}a mutable array reference of type {_type(typeof(x))} was both closed "
            f"over and passed as the argument {_name(debug, i)}"
        )


def check_no_returned(
    debug: DebugInfo | None,
    jaxpr: Jaxpr,
    result_paths: Callable[[], Sequence[str]] | None = None,
) -> None:
    """A traced function returning a mutable value is an error (`err1`), saying where in the
    result it is (`result_paths()` names each output, `""` for none) and where the value came
    from: an argument, or the line that created it."""
    for i, out in enumerate(jaxpr.outvars):
        aval = out.aval
        if not aval.mutable:
            continue
        paths = result_paths() if result_paths is not None else ()
        path = paths[i] if i < len(paths) else ""
        loc = f" at output tree path {path}" if path else ""
        origin = ""
        maker = next((e for e in jaxpr.eqns if out in e.outvars), None)
        if maker is not None:
            origin = (
                f"\n\nThe returned mutable array was created on line {maker.source_info.summary()}."
            )
        elif out in jaxpr.invars:
            index = list(jaxpr.invars).index(out)
            origin = (
                "\n\nThe returned mutable array was passed in as the argument "
                f"{_name(debug, index)}."
            )
        func = debug.func_src_info if debug is not None else "<unknown>"
        traced_for = debug.traced_for if debug is not None else "jit"
        raise ValueError(
            f"function {func} traced for {traced_for} returned a mutable array reference of "
            f"type {_type(aval)}{loc}, but mutable array references cannot be returned.{origin}"
        )
