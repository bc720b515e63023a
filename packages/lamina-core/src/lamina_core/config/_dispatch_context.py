"""What a jitted call depends on besides its arguments, published for dispatchers outside Python.

A jitted call runs a program chosen by its arguments, by the configuration in effect, and by
whether a trace is active (under a trace, a jitted function is staged rather than run). Lamina's
own caches read the last two directly. A dispatcher written in C++ (jaxlib's jit fast path, which
the runtime uses) cannot: it keys its cache on values it can see, kept in a *context store* with
one process-wide value and one per thread. Core writes a fresh value into every registered store
whenever the options change or a configuration or trace scope opens or closes, so a cached entry
is only found again in the context it was made in.

This module imports nothing from the rest of core: config and tracing both call it.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Hashable, Iterator
from typing import Any, Protocol


class ContextStore(Protocol):
    """A value with a process-wide setting and a per-thread override (jaxlib's `Config`)."""

    def set_global(self, value: Any) -> None: ...

    def get_local(self) -> Any: ...

    def swap_local(self, value: Any) -> Any: ...


_stores: list[ContextStore] = []
_fresh = itertools.count(1)


def register_context_store(store: ContextStore) -> None:
    """Keep `store` up to date from now on; it starts with a process-wide value of its own."""
    store.set_global(next(_fresh))
    _stores.append(store)


def changed_globally() -> None:
    """The process-wide options changed: no earlier context is current any more."""
    if _stores:
        value = next(_fresh)
        for store in _stores:
            store.set_global(value)


@contextlib.contextmanager
def local_scope(key: Hashable | None = None) -> Iterator[None]:
    """A context of this thread's own for the duration of the block (scopes nest).

    Without a `key` the context is new, equal to no other (a trace scope: what runs inside
    must not find what ran outside). With one, it is the enclosing context refined by `key`:
    a configuration scope setting the same options inside the same context is the same context
    again, so C++ finds the entries it made the last time instead of adding new ones.
    """
    if not _stores:
        yield
        return
    # Read before the swap, not returned by it: a KeyboardInterrupt as `swap_local` returns
    # would lose the value to restore, and leave this thread's C++ dispatch finding the
    # entries made inside this scope after it (the wrong dtypes, after an x64 scope).
    previous = [store.get_local() for store in _stores]
    fresh = next(_fresh) if key is None else None
    try:
        for store, outer in zip(_stores, previous, strict=True):
            store.swap_local(fresh if key is None else (outer, key))
        yield
    finally:
        for store, old in zip(_stores, previous, strict=True):
            store.swap_local(old)
