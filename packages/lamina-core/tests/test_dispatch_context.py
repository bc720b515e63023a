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


def test_equal_configuration_scopes_are_one_context_and_traces_stay_apart() -> None:
    store = Store()
    dispatch_context.register_context_store(store)
    try:

        def scoped_value(**overrides: Any) -> Any:
            with config(**overrides):
                return store.value

        first, again = scoped_value(jax_enable_x64=True), scoped_value(jax_enable_x64=True)
        assert first == again  # a loop of equal scopes does not make a context per scope
        assert scoped_value(jax_enable_x64=False) != first
        assert scoped_value(jax_enable_x64=True, jax_debug_nans=True) != first

        inside_trace: list[Any] = []

        def record(x: Any) -> Any:
            inside_trace.append(scoped_value(jax_enable_x64=True))
            return x

        make_jaxpr(record)(1.0)
        make_jaxpr(record)(1.0)
        # Under a trace, the same scope is another context: a jitted call there must be staged,
        # never answered by an entry made outside; and each trace is a context of its own.
        assert first not in inside_trace and inside_trace[0] != inside_trace[1]

        config.update("jax_debug_infs", config.jax_debug_infs)
        assert scoped_value(jax_enable_x64=True) != first  # options changed in between
    finally:
        dispatch_context._stores.remove(store)


def test_equal_configuration_scopes_have_equal_tokens() -> None:
    with config(jax_enable_x64=True):
        token = config.token()
    with config(jax_enable_x64=True):
        assert config.token() == token
        with config(jax_enable_x64=True):
            assert config.token() == token  # the same options in effect
    with config(jax_enable_x64=False):
        assert config.token() != token
