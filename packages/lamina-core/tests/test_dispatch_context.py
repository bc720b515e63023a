"""Core publishes its dispatch context to registered stores (the runtime's C++ jit key)."""

from __future__ import annotations

import threading
from typing import Any

from lamina_core import config, make_jaxpr
from lamina_core.config import _dispatch_context as dispatch_context


class Store:
    """A jaxlib-Config-like store: one global value and one per thread."""

    def __init__(self) -> None:
        self.global_value: Any = None
        self._local = threading.local()

    def set_global(self, value: Any) -> None:
        self.global_value = value

    def get_local(self) -> Any:
        return getattr(self._local, "value", None)

    def swap_local(self, value: Any) -> Any:
        old = getattr(self._local, "value", None)
        self._local.value = value
        return old

    @property
    def value(self) -> Any:
        local = getattr(self._local, "value", None)
        return self.global_value if local is None else local


def test_updates_scopes_and_traces_each_get_a_fresh_value() -> None:
    store = Store()
    dispatch_context.register_context_store(store)
    try:
        start = store.value
        config.update("jax_enable_x64", False)
        after_update = store.value
        assert after_update != start
        seen: list[Any] = []
        with config(jax_enable_x64=True):
            seen.append(store.value)

            def record(x: Any) -> Any:
                seen.append(store.value)
                return x

            make_jaxpr(record)(1.0)
            seen.append(store.value)
        assert store.value == after_update  # restored on exit
        scope, trace, scope_again = seen
        assert len({after_update, scope, trace}) == 3 and scope_again == scope
    finally:
        dispatch_context._stores.remove(store)
