"""`named_scope` and `named_call`: names that label the operations traced inside them.

The names form a stack, `"outer/inner"`, kept per thread and task. As in JAX, they change
nothing in a printed jaxpr or in what a function computes; they are there for debugging
tools (`current_name_stack()`).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from contextvars import ContextVar, Token
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

_stack: ContextVar[tuple[str, ...]] = ContextVar("lamina_name_stack", default=())


def current_name_stack() -> str:
    """The names of the scopes open here, outermost first, joined by "/"."""
    return "/".join(_stack.get())


class _Scope(contextlib.ContextDecorator):
    """One use of `named_scope`: a `with` block or a decorator."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._tokens: list[Token[tuple[str, ...]]] = []

    def __enter__(self) -> None:
        self._tokens.append(_stack.set((*_stack.get(), self.name)))

    def __exit__(self, *exc: object) -> None:
        _stack.reset(self._tokens.pop())


def named_scope(name: str) -> _Scope:
    """A scope (or decorator) that adds `name` to the name stack, as `jax.named_scope`."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    return _Scope(name)


def named_call(fun: F, *, name: str | None = None) -> F:
    """`fun` running inside `named_scope(name)` (default: `fun.__name__`), as `jax.named_call`."""
    scope_name = fun.__name__ if name is None else name

    @functools.wraps(fun)
    def named(*args: Any, **kwargs: Any) -> Any:
        with _Scope(scope_name):
            return fun(*args, **kwargs)

    return named  # type: ignore[return-value]  # same signature as fun
