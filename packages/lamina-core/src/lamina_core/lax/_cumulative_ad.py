"""Differentiation rules of the cumulative reductions, as JAX's: `cumsum` is linear (its
transpose a cumsum the other way); `cumprod`, `cummax`, `cummin` and `cumlogsumexp` (through
the custom-derivative `logaddexp`) differentiate as the jvp of the parallel prefix scan
(`associative_scan`), as JAX does."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lamina_core.interpreters import deflinear, instantiate_zeros, jvp_flat, jvp_rules
from lamina_core.lax import _cumulative as c
from lamina_core.lax._associative_scan import associative_scan
from lamina_core.lax._elementwise import max as max_
from lamina_core.lax._elementwise import min as min_
from lamina_core.lax._elementwise import mul
from lamina_core.lax._logaddexp import _logaddexp_custom


def _cumsum_transpose(ct: Any, x: Any, *, axis: int, reverse: bool) -> Sequence[Any]:
    return [c.cumsum(ct, axis=axis, reverse=not reverse)]


deflinear(c.cumsum_p, _cumsum_transpose)


def _cumulative_jvp(combine: Callable[[Any, Any], Any]) -> Any:
    def rule(primals: Sequence[Any], tangents: Sequence[Any], *, axis: int, reverse: bool) -> Any:
        def scan(x: Any) -> list[Any]:
            return [associative_scan(combine, x, reverse=reverse, axis=axis)]

        outs, out_tangents = jvp_flat(scan, list(primals), [instantiate_zeros(tangents[0])])
        return outs[0], out_tangents[0]

    return rule


jvp_rules.set(c.cumprod_p, _cumulative_jvp(mul))
jvp_rules.set(c.cummax_p, _cumulative_jvp(max_))
jvp_rules.set(c.cummin_p, _cumulative_jvp(min_))
jvp_rules.set(c.cumlogsumexp_p, _cumulative_jvp(_logaddexp_custom))
