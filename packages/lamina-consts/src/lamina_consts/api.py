"""`make_jaxpr` in the configured constants mode.

Core's tracing always gives the literal form; with `jax_use_simplified_jaxpr_constants` off
(JAX's previous implementation, kept for comparison), this returns the constvars form.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from lamina_consts.forms import hoist, is_hi_literal
from lamina_core import make_jaxpr as _core_make_jaxpr
from lamina_core.config import use_simplified_jaxpr_constants
from lamina_core.ir import Jaxpr, Literal
from lamina_core.trace import api_boundary


def _has_hi_literal(jaxpr: Jaxpr) -> bool:
    # Plain loops: every traced program's every operand is looked at.
    for a in jaxpr.outvars:
        if isinstance(a, Literal) and a.aval.is_high:
            return True
    for e in jaxpr.eqns:
        for a in e.invars:
            if isinstance(a, Literal) and a.aval.is_high:
                return True
    return False


def make_jaxpr(
    fun: Callable[..., Any],
    static_argnums: int | Sequence[int] = (),
    axis_env: Sequence[tuple[Any, int]] | None = None,
    return_shape: bool = False,
    *,
    static_argnames: str | Sequence[str] = (),
) -> Callable[..., Any]:
    """`lamina_core.make_jaxpr`, giving the constvars form when simplified constants are off."""
    traced = _core_make_jaxpr(
        fun, static_argnums, axis_env, return_shape, static_argnames=static_argnames
    )

    @api_boundary
    @functools.wraps(fun)
    def make_jaxpr_f(*args: Any, **kwargs: Any) -> Any:
        out = traced(*args, **kwargs)
        if use_simplified_jaxpr_constants.value:
            # Values of hi types are never literals, in either mode (as JAX's).
            closed = out[0] if return_shape else out
            if not _has_hi_literal(closed.jaxpr):
                return out
            hoisted = hoist(closed, is_hi_literal)
            return (hoisted, out[1]) if return_shape else hoisted
        if return_shape:
            closed, shapes = out
            return hoist(closed), shapes
        return hoist(out)

    make_jaxpr_f.__name__, make_jaxpr_f.__qualname__ = traced.__name__, traced.__qualname__
    return make_jaxpr_f
