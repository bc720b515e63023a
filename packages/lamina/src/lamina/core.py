"""`jax.core`: the types of traced values and jaxprs, and evaluating a jaxpr, as Lamina's.

The names JAX 0.10.2 deprecated here are served as JAX serves them, with its
`DeprecationWarning` (from `lamina.extend.core`, where JAX moved them), and the names it
removed raise its `AttributeError`.
"""

from __future__ import annotations

import contextlib
import operator
import warnings
from collections.abc import Iterator, Sequence
from typing import Any, TypeAlias

from lamina.extend import core as extend_core
from lamina_core.interpreters import ensure_compile_time_eval as ensure_compile_time_eval
from lamina_core.ir import AbstractValue as AbstractValue
from lamina_core.ir import Atom as Atom
from lamina_core.ir import ClosedJaxpr, Jaxpr
from lamina_core.ir import ShapedArray as ShapedArray
from lamina_core.trace import EVAL_TRACE, set_current_trace
from lamina_core.trace import Trace as Trace
from lamina_core.trace import Tracer as Tracer
from lamina_core.trace import concrete_or_error as _concrete_or_error
from lamina_core.trace import eval_jaxpr as _eval_jaxpr

ParamDict: TypeAlias = dict[str, Any]
Value: TypeAlias = Any

__all__ = [
    "AbstractValue",
    "Atom",
    "ParamDict",
    "ShapedArray",
    "Trace",
    "Tracer",
    "Value",
    "ensure_compile_time_eval",
    "eval_context",
    "eval_jaxpr",
    "max_dim",
    "min_dim",
]


def eval_jaxpr(
    jaxpr: Jaxpr | ClosedJaxpr,
    consts: Sequence[Any],
    *args: Any,
    propagate_source_info: bool = True,
) -> list[Any]:
    """Evaluate `jaxpr` on `args` by binding its equations (re-traced under a transformation).

    `propagate_source_info` is accepted for JAX's signature: Lamina's equations bound again
    always keep their source lines.
    """
    del propagate_source_info
    return _eval_jaxpr(jaxpr, consts, *args)


@contextlib.contextmanager
def eval_context() -> Iterator[None]:
    """Inside the block, primitives are applied eagerly, outside any trace."""
    with set_current_trace(EVAL_TRACE):
        yield


def _dim(d: Any, which: str, fn: str) -> int:
    index: int = operator.index(_concrete_or_error(d, f"argument `{which}` of `core.{fn}`"))
    return index


def max_dim(d1: Any, d2: Any) -> int:
    """`max(d1, d2)` of two dimension sizes (Lamina's shapes are all constant)."""
    return max(_dim(d1, "d1", "max_dim"), _dim(d2, "d2", "max_dim"))


def min_dim(d1: Any, d2: Any) -> int:
    """`min(d1, d2)` of two dimension sizes (Lamina's shapes are all constant)."""
    return min(_dim(d1, "d1", "min_dim"), _dim(d2, "d2", "min_dim"))


_MOVED = [
    "CallPrimitive",
    "DebugInfo",
    "DropVar",
    "Effect",
    "Effects",
    "InconclusiveDimensionOperation",
    "JaxprTypeError",
    "check_jaxpr",
    "concrete_or_error",
    "find_top_trace",
    "gensym",
    "get_opaque_trace_state",
    "jaxprs_in_params",
    "new_jaxpr_eqn",
    "no_effects",
    "nonempty_axis_env_DO_NOT_USE",
    "primal_dtype_to_tangent_dtype",
    "unsafe_am_i_under_a_jit_DO_NOT_USE",
    "unsafe_am_i_under_a_vmap_DO_NOT_USE",
    "unsafe_get_axis_names_DO_NOT_USE",
    "valid_jaxtype",
]
"""Deprecated in JAX 0.10.0, still served: each is `jax.extend.core`'s (or `jax.errors`')."""

_MOVED_TO_ERRORS = frozenset({"InconclusiveDimensionOperation", "JaxprTypeError"})

_REMOVED = {
    "get_aval": "jax.core.get_aval was deprecated in JAX v0.8.2 and removed in JAX v0.10.0;"
    " use jax.typeof instead.",
    "traverse_jaxpr_params": "jax.core.traverse_jaxpr_params was deprecated in JAX v0.8.2 and"
    " removed in JAX v0.10.0.",
    **{
        name: f"jax.core.{name} was deprecated in JAX v0.8.2 and removed in JAX v0.10.0."
        f" Use jax.extend.core.{name}."
        for name in [
            "mapped_aval",
            "unmapped_aval",
            "set_current_trace",
            "take_current_trace",
            "TraceTag",
            "call_impl",
            "subjaxprs",
            "AbstractToken",
        ]
    },
}
"""Removed in JAX 0.10.0: JAX answers these with an AttributeError carrying its message."""


def _deprecation_message(name: str) -> str:
    if name.endswith("_DO_NOT_USE"):
        return f"jax.core.{name} is deprecated."
    home = "jax.errors" if name in _MOVED_TO_ERRORS else "jax.extend.core"
    return f"jax.core.{name} is deprecated. Use {home}.{name}."


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        warnings.warn(_deprecation_message(name), DeprecationWarning, stacklevel=2)
        return getattr(extend_core, name)
    if name in _REMOVED:
        raise AttributeError(_REMOVED[name])
    raise AttributeError(f"module 'lamina.core' has no attribute {name!r}")
