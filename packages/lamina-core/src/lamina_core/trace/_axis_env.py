"""The named-axis environment: which mapped axes are bound while a function runs.

`vmap` with an `axis_name` and a `shard_map` body bind their axes here (`extend_axis_env`), so
collectives find an axis's size by name and varying-manual-axes typing orders axes as they
were bound. The environment is a context variable: a scope, never module state. This module
knows no interpreter; batching and shard_map push frames, everything else reads them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class AxisData:
    """The mapped axis of one `vmap`: its name (for collectives), size and SPMD mesh axes."""

    name: Any
    size: int
    spmd_name: tuple[Any, ...] | None = None


_axis_env: ContextVar[tuple[AxisData, ...]] = ContextVar("lamina_axis_env", default=())


@contextlib.contextmanager
def extend_axis_env(axis_data: AxisData) -> Iterator[None]:
    """Bind `axis_data.name` (if any) while a batched function runs, for collectives."""
    outer = _axis_env.get()
    try:
        _axis_env.set((*outer, axis_data))  # inside: an interrupt as it returns unbinds it
        yield
    finally:
        _axis_env.set(outer)


def axis_frame(name: Any) -> AxisData:
    """The innermost bound axis called `name`; JAX's `NameError` if none is."""
    for data in reversed(_axis_env.get()):
        if data.name == name:
            return data
    raise NameError(f"unbound axis name: {name}")


def bound_axes() -> tuple[AxisData, ...]:
    """The bound axes, outermost first."""
    return _axis_env.get()


def bound_axis_names() -> tuple[Any, ...]:
    """The names of the bound axes, outermost first."""
    return tuple(d.name for d in _axis_env.get() if d.name is not None)


__all__ = ["AxisData", "axis_frame", "bound_axes", "bound_axis_names", "extend_axis_env"]
