"""Keep optree's registry alive when a program runs its exit functions by hand.

optree's extension registers exit functions (pybind11 functions, unnamed) that tear its type
registry down; after them every tuple, list and dict is a leaf. At a real exit that is
harmless, but code that calls `atexit._run_exitfuncs()` and goes on (chex's test of its
unchecked-assertion warning does) would leave Lamina's pytrees broken for the rest of the
process, where JAX's own pytrees keep working. So at import the pybind11 exit functions are
replaced by one that calls them only once the interpreter is shutting down (`threading` sets
`_SHUTTING_DOWN` before running exit functions). Other exit functions are left alone.
"""

from __future__ import annotations

import atexit
import threading
from typing import Any, cast


class _Collect:
    """Compares unequal to every registered exit function, collecting them: `atexit` offers
    no other way to list them (it compares each with the argument of `unregister`)."""

    def __init__(self) -> None:
        self.found: list[Any] = []

    def __eq__(self, other: object) -> bool:
        self.found.append(other)
        return False

    __hash__ = None  # type: ignore[assignment]  # compared, never hashed


class _Match:
    """Equal to exactly one object (so `unregister` removes only that one)."""

    def __init__(self, target: object) -> None:
        self.target = target

    def __eq__(self, other: object) -> bool:
        return other is self.target

    __hash__ = None  # type: ignore[assignment]  # compared, never hashed


def _is_pybind11(func: object) -> bool:
    return "pybind11" in type(getattr(func, "__self__", None)).__name__


def guard_optree_exit() -> None:
    collect = _Collect()
    atexit.unregister(cast(Any, collect))
    teardown = [f for f in collect.found if _is_pybind11(f)]
    if not teardown:
        return
    for func in teardown:
        atexit.unregister(cast(Any, _Match(func)))

    def at_shutdown() -> None:
        if getattr(threading, "_SHUTTING_DOWN", True):
            for func in reversed(teardown):  # their own order: last registered first
                func()

    atexit.register(at_shutdown)
