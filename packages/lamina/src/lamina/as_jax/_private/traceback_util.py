"""`jax._src.traceback_util` under `lamina.as_jax`: what libraries call of JAX's traceback
filtering (equinox and flax mark their API functions with `api_boundary` and their files with
`register_exclusion` at import).

`api_boundary` is Lamina's boundary: an exception leaving the function loses Lamina's frames as
`jax_traceback_filtering` says. `register_exclusion` only records the path in `_exclude_paths`
(flax edits that list): Lamina filters out its own frames only, so the library's stay in
tracebacks, as they would with JAX's filtering off for them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from lamina_core.trace import api_boundary as _lamina_api_boundary

F = TypeVar("F", bound=Callable[..., Any])

_exclude_paths: list[str] = []
"""The paths libraries asked to hide (JAX's list of the same name), recorded only."""


def register_exclusion(path: str) -> None:
    """Record `path` as one whose frames JAX would hide from tracebacks."""
    _exclude_paths.append(path)


def api_boundary(fun: F, *, repro_api_name: str | None = None, repro_user_func: bool = False) -> F:
    """`fun`, wrapped so that an exception leaving it has Lamina's frames filtered out (JAX's
    keyword arguments, for its repro tool, are accepted and ignored)."""
    return _lamina_api_boundary(fun)
