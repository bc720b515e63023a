"""`named_scope` and `named_call`: names that label the operations traced inside them.

The names form a stack kept per thread and task. As in JAX, they change nothing in what a
function computes; each staged equation records the stack open when it was staged (relative
to the jaxpr it is in: tracing a new jaxpr starts from an empty stack), which
`pretty_print(name_stack=True)` shows and debugging tools read (`current_name_stack()`).

Transformations push a `Transform` entry (`jvp`, `vmap`, `transpose`), which wraps the next
scope name when printed: `jvp(outer)/inner`, or `jvp()` when no scope follows.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from contextvars import ContextVar, Token
from typing import Any, NamedTuple, TypeAlias, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class Transform(NamedTuple):
    """A transformation's entry in a name stack."""

    name: str


NameEntry: TypeAlias = "str | Transform"
NameStack: TypeAlias = "tuple[str | Transform, ...]"

name_stack_var: ContextVar[NameStack] = ContextVar("lamina_name_stack", default=())
"""The open name stack; read by `current_source_info` for each staged equation."""


@functools.lru_cache(maxsize=1024)
def format_name_stack(stack: NameStack) -> str:
    """`stack` as JAX prints it: scopes joined by "/", transforms wrapping the scope after
    them (`transpose(jvp(outer))/inner`). Memoized: the equations of a program share a few
    stacks, and lowering and printing format one per equation."""
    parts: list[str] = []
    for entry in reversed(stack):
        if type(entry) is Transform:
            if parts:
                parts[-1] = f"{entry.name}({parts[-1]})"
            else:
                parts.append(f"{entry.name}()")
        else:
            parts.append(entry)  # type: ignore[arg-type]  # a scope name
    return "/".join(reversed(parts))


def current_name_stack() -> str:
    """The names of the scopes open here, outermost first, joined by "/"."""
    return format_name_stack(name_stack_var.get())


@contextlib.contextmanager
def transform_name_stack(name: str) -> Iterator[None]:
    """Push the transformation `name` for the block (`jvp`, `vmap`, `transpose`)."""
    token = name_stack_var.set((*name_stack_var.get(), Transform(name)))
    try:
        yield
    finally:
        name_stack_var.reset(token)


@contextlib.contextmanager
def reset_name_stack() -> Iterator[None]:
    """An empty name stack for the block: tracing a new jaxpr (names are relative to it)."""
    token = name_stack_var.set(())
    try:
        yield
    finally:
        name_stack_var.reset(token)


class _Scope(contextlib.ContextDecorator):
    """One use of `named_scope`: a `with` block or a decorator."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._tokens: list[Token[NameStack]] = []

    def __enter__(self) -> None:
        self._tokens.append(name_stack_var.set((*name_stack_var.get(), self.name)))

    def __exit__(self, *exc: object) -> None:
        name_stack_var.reset(self._tokens.pop())


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
