"""Where `jit`'s caches live: keyed on the function (held weakly), not on the `jit` wrapper.

As JAX's trace cache is keyed on the function, every `jit(f)` of one `f` shares one
`FunctionCaches`: the traces by `Signature` (argument tree and types, static arguments,
tracing configuration), which do not depend on the wrapper's options. Under it, each set of
options (`static_argnums`, donation, `keep_unused`, `inline`, and the runtime's shardings and
compiler options) has its own `JitCaches`: the staged calls with their donation flags, and
whatever the runtime caches per call. So `jit(f)(x)` with a new wrapper each time traces,
lowers and compiles once; `jit(f)` and `jit(g)` share nothing.

Functions are found by equality, as JAX's caches find them (a fresh bound method `obj.m`
finds the caches of a live equal one; a new lambda or `functools.partial` is a new function),
and held by a weak reference: their caches go when they die. A function that cannot be
referenced weakly or hashed (JAX refuses those) gets caches of its own wrapper. The index is
bounded (least recently used functions leave it first); wrappers alive keep their caches.

Nothing here traces: `_jit` decides what a miss means.
"""

from __future__ import annotations

import contextlib
import inspect
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from lamina_core.transforms._jit import Signature, Staged

FUNCTIONS_CACHED: Final = 8192
"""How many functions the index holds at most, as JAX's global C++ jit cache."""

Plan = tuple[tuple[int, ...], tuple[int, ...], set[int], set[int]]


class JitCaches:
    """What one function's `jit` wrappers with one set of options cache: staged calls by
    signature, per-call plans and `jit` equation parameters. Identity is intended: wrappers
    share it; it is cleared in place, never replaced. The runtime extends it."""

    __slots__ = ("__weakref__", "call_params", "plans", "staged")

    def __init__(self) -> None:
        self.staged: dict[Signature, Staged] = {}
        self.plans: dict[int, Plan] = {}
        """By number of positional arguments: static and donated positions."""
        self.call_params: dict[int, tuple[Staged, dict[str, Any]]] = {}
        """The `jit` equation's parameters of each staged call, by its id (holding it, so the
        id stays its own)."""

    def clear(self) -> None:
        self.staged.clear()
        self.plans.clear()
        self.call_params.clear()


class FunctionCaches:
    """Everything `jit` caches for one function. Identity is intended."""

    __slots__ = ("by_options", "parameters", "seen", "traces")

    def __init__(self) -> None:
        self.traces: dict[Signature, Staged] = {}
        """Traces by signature, without donation (the same for every set of options)."""
        self.seen: list[Signature] = []
        """Signatures traced, in order (to explain a miss)."""
        self.by_options: dict[Hashable, JitCaches] = {}
        self.parameters: tuple[list[inspect.Parameter] | None] | None = None
        """The function's parameters, boxed, once read (`(None,)`: it has no signature)."""

    def for_options(self, key: Hashable, make: Callable[[], JitCaches]) -> JitCaches:
        """The caches of wrappers with options `key`, made by `make` the first time."""
        found = self.by_options.get(key)
        if found is None:
            found = self.by_options.setdefault(key, make())
        return found

    def clear(self) -> None:
        """Forget every trace and staged call (each set of options' caches emptied in place)."""
        self.traces.clear()
        self.seen.clear()
        for caches in list(self.by_options.values()):
            caches.clear()


class TraceCaches:
    """The index of `FunctionCaches` by function, weak and bounded. Identity is intended."""

    def __init__(self, capacity: int = FUNCTIONS_CACHED) -> None:
        self.capacity = capacity
        self._data: OrderedDict[weakref.ref[Any], FunctionCaches] = OrderedDict()
        self._lock = threading.Lock()

    def of(self, fun: Any) -> FunctionCaches:
        """The caches of `fun` (or of a live function equal to it); new ones, not indexed, if
        `fun` cannot be referenced weakly or hashed."""
        try:
            probe = weakref.ref(fun)
            hash(probe)
        except TypeError:
            return FunctionCaches()
        data = self._data
        with self._lock:
            found = data.get(probe)
            if found is not None:
                # A collection may have dropped it meanwhile: still a valid answer.
                with contextlib.suppress(KeyError):
                    data.move_to_end(probe)
                return found
            found = data[weakref.ref(fun, self._forget)] = FunctionCaches()
            while len(data) > self.capacity:
                data.popitem(last=False)
            return found

    def _forget(self, key: weakref.ref[Any]) -> None:
        # Called by the collector, possibly while this thread holds the lock: no lock here
        # (one dict operation is atomic).
        self._data.pop(key, None)

    def clear(self) -> None:
        """Forget every function (wrappers alive keep the caches they hold)."""
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, fun: object) -> bool:
        try:
            return weakref.ref(fun) in self._data
        except TypeError:
            return False


trace_caches: Final = TraceCaches()
"""The process's index of `jit` caches (`lamina.clear_caches()` empties it)."""
