"""The bound on the runtime's in-memory caches of compiled programs.

Every compiled executable holds device code and memory until it is dropped; a process that
compiles many distinct programs (shapes, closures) would keep them all. JAX bounds its
in-process compilation caches (least recently used entries go first) and
`jax.clear_caches()` empties them; Lamina does the same with `LRUCache`, sized by the
`jax_executable_cache_size` option.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Hashable
from typing import Final, Generic, Protocol, TypeVar

from lamina_core import config

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

DEFAULT_SIZE: Final = 2048
"""As JAX's in-memory compilation cache (`weakref_lru_cache`'s default size)."""

executable_cache_size: Final = config.define_int(
    "jax_executable_cache_size",
    DEFAULT_SIZE,
    "How many compiled programs each in-memory cache of the runtime keeps (executables by "
    "module, eager programs by primitive and types); the least recently used are dropped "
    "beyond it. 0 or less: no bound. `lamina.clear_caches()` empties the caches.",
)


class LRUCache(Generic[K, V]):
    """A mapping that keeps at most `jax_executable_cache_size` entries, dropping the least
    recently used (read or written) first. Identity is intended: it owns its entries.

    Safe to share between threads: every operation holds the cache's lock. `OrderedDict` is
    not safe without it: a key's `__hash__` or `__eq__` in Python lets another thread run
    mid-operation, and a concurrent change of the dict's order crashed the process
    (a segmentation fault in `OrderedDict.__setitem__`, found by tests/test_threads.py).
    """

    __slots__ = ("_data", "_lock")

    def __init__(self) -> None:
        self._data: OrderedDict[K, V] = OrderedDict()
        # Reentrant: a finalizer run by the garbage collector inside an operation may use the
        # cache again on the same thread.
        self._lock = threading.RLock()

    def get(self, key: K) -> V | None:
        """The entry for `key` (now the most recently used), or None."""
        with self._lock:
            data = self._data
            value = data.get(key)
            if value is not None:
                data.move_to_end(key)
            return value

    def __setitem__(self, key: K, value: V) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            self._trim()

    def setdefault(self, key: K, value: V) -> V:
        """The entry for `key`, stored as `value` if there was none."""
        with self._lock:
            known = self.get(key)
            if known is not None:
                return known
            self[key] = value
            return value

    def _trim(self) -> None:
        limit = executable_cache_size.value
        if limit <= 0:
            return
        data = self._data
        while len(data) > limit:
            data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._data


class ClearableCache(Protocol):
    """A cache `lamina.clear_caches()` empties: `functools.lru_cache`'s results are ones."""

    def cache_clear(self) -> None: ...


_registered: weakref.WeakKeyDictionary[ClearableCache, str] = weakref.WeakKeyDictionary()
"""The caches others asked `clear_caches` to empty, with what each is for; weak, as JAX's: a
cache dropped by its owner leaves."""


def register_backend_cache(cache: ClearableCache, for_what: str) -> None:
    """Have `lamina.clear_caches()` and `clear_backends()` empty `cache` as well, as
    `jax.extend.backend.register_backend_cache` does (`for_what` says what it holds).

    Args:
        cache: any object with `cache_clear()`, e.g. a `functools.lru_cache` function.
        for_what: what the cache is for, for people reading a debugger.
    """
    _registered[cache] = for_what


def clear_registered_caches() -> None:
    """Empty every cache `register_backend_cache` named."""
    for cache in list(_registered.keys()):
        cache.cache_clear()
