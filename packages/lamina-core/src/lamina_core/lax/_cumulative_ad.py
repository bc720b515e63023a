"""Differentiation rules of the cumulative reductions, as JAX's: `cumsum` is linear (its
transpose a cumsum the other way)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lamina_core.interpreters.helpers import deflinear
from lamina_core.lax import _cumulative as c


def _cumsum_transpose(ct: Any, x: Any, *, axis: int, reverse: bool) -> Sequence[Any]:
    return [c.cumsum(ct, axis=axis, reverse=not reverse)]


deflinear(c.cumsum_p, _cumsum_transpose)
