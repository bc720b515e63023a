"""`jax.extend.core`: the IR and trace machinery for libraries that extend JAX, as Lamina's.

Jaxprs, variables, literals, equations and effects are lamina_core's; `Primitive` makes a
primitive defined through JAX's API and is the type of all of Lamina's (`_call`);
`primitives` holds JAX's primitives by their JAX names. The functions below answer JAX's
questions about the current trace from Lamina's trace stack.
"""

from __future__ import annotations

import contextlib
import importlib
import weakref
from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import Any

import ml_dtypes
import numpy as np

from lamina.extend.core._call import CallPrimitive as CallPrimitive
from lamina.extend.core._call import Primitive as Primitive
from lamina.extend.core._call import call_impl as call_impl
from lamina_core import dtypes as _dtypes
from lamina_core.interpreters import BatchTrace, JVPTracer, LinearizeTracer, StagingTrace
from lamina_core.ir import AbstractValue
from lamina_core.ir import ClosedJaxpr as ClosedJaxpr
from lamina_core.ir import DebugInfo as DebugInfo
from lamina_core.ir import DropVar as DropVar
from lamina_core.ir import Effect as Effect
from lamina_core.ir import Effects as Effects
from lamina_core.ir import Jaxpr as Jaxpr
from lamina_core.ir import JaxprEqn as JaxprEqn
from lamina_core.ir import Literal as Literal
from lamina_core.ir import Var as Var
from lamina_core.ir import jaxprs_in_params as jaxprs_in_params
from lamina_core.ir import no_effects as no_effects
from lamina_core.lax import AbstractToken as AbstractToken
from lamina_core.lax import Token as Token
from lamina_core.trace import EVAL_TRACE, Trace, Tracer, bound_axes, current_trace, typeof
from lamina_core.trace import InconclusiveDimensionOperation as InconclusiveDimensionOperation
from lamina_core.trace import JaxprTypeError as JaxprTypeError
from lamina_core.trace import check_jaxpr as check_jaxpr
from lamina_core.trace import concrete_or_error as _concrete_or_error
from lamina_core.trace import jaxpr_as_fun as jaxpr_as_fun
from lamina_core.trace import set_current_trace as _set_current_trace
from lamina_runtime import Array

array_types: set[type] = {
    np.ndarray,
    Array,
    *(
        np.dtype(d).type
        for d in (
            "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "float16", "float32", "float64", "complex64", "complex128", "longlong",
        )
    ),
    *(
        getattr(ml_dtypes, name)
        for name in (
            "bfloat16", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4",
            "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
            "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "int2", "int4", "uint2", "uint4",
        )
        if hasattr(ml_dtypes, name)
    ),
}  # fmt: skip
"""The types of array values (NumPy's arrays and scalar types, Lamina's `Array`)."""


class TraceTag:
    """A tag naming a transformation's set of traces: every tag equals every other, as JAX's
    (Lamina's traces carry their identity themselves)."""

    def __hash__(self) -> int:
        return hash(TraceTag)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TraceTag)


def concrete_or_error(force: Any, val: Any, context: str = "") -> Any:
    """`force(val)` for a concrete `val` (a differentiated value counts by its primal), else
    JAX's ConcretizationTypeError (`context` saying where). `force=None` returns the value."""
    apply = force if force is not None else (lambda x: x)
    while isinstance(val, JVPTracer | LinearizeTracer):
        val = val.primal
    return apply(_concrete_or_error(val, context))


def find_top_trace(xs: Any) -> Trace:
    """The trace primitives are applied in now (JAX's ignores `xs` too)."""
    del xs
    return current_trace()


def gensym() -> type[Var]:
    """A maker of fresh variables: `gensym()(aval)`."""
    return Var


class OpaqueTraceState:
    """Which trace was current when it was made; equal to another made in the same trace."""

    __slots__ = ("_trace",)

    def __init__(self, trace: Trace) -> None:
        self._trace = weakref.ref(trace)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OpaqueTraceState) and self._trace() is other._trace()

    def __hash__(self) -> int:
        return id(self._trace())


def get_opaque_trace_state(convention: Any = None) -> OpaqueTraceState:
    del convention
    return OpaqueTraceState(current_trace())


def mapped_aval(size: int, axis: int | None, aval: AbstractValue) -> AbstractValue:
    """The type of one element of a batch of `aval`s mapped along `axis`."""
    return aval if axis is None else aval.dec_rank(size, axis)


def unmapped_aval(
    size: int, axis: int | None, aval: AbstractValue, explicit_mesh_axis: Any = None
) -> AbstractValue:
    """The type of `size` values of type `aval` stacked along `axis`."""
    del explicit_mesh_axis  # Lamina's vmap places mapped axes over no mesh axis
    return aval if axis is None else aval.inc_rank(size, axis)


def new_jaxpr_eqn(
    invars: Any,
    outvars: Any,
    primitive: Any,
    params: Mapping[str, Any],
    effects: Effects,
    source_info: Any = None,
    ctx: Any = None,
) -> JaxprEqn:
    del ctx  # JAX's per-equation compute context; Lamina's equations have none
    if source_info is None:
        return JaxprEqn(tuple(invars), tuple(outvars), primitive, dict(params), effects)
    eqn = JaxprEqn(tuple(invars), tuple(outvars), primitive, dict(params), effects, source_info)
    return eqn


def nonempty_axis_env_DO_NOT_USE() -> bool:
    return bool(bound_axes())


def primal_dtype_to_tangent_dtype(primal_dtype: Any) -> Any:
    """The dtype of tangents of values of `primal_dtype`: itself if inexact, else float0."""
    if _dtypes.issubdtype(primal_dtype, np.inexact):
        return primal_dtype
    return _dtypes.float0


@contextlib.contextmanager
def set_current_trace(trace: Trace, check_leaks: bool = False) -> Iterator[None]:
    """Make `trace` current inside the block (`check_leaks` is JAX's leak checker's)."""
    del check_leaks
    with _set_current_trace(trace):
        yield


@contextlib.contextmanager
def take_current_trace() -> Iterator[Trace]:
    """Yield the current trace, with eager evaluation current inside the block."""
    trace = current_trace()
    with _set_current_trace(EVAL_TRACE):
        yield trace


def subjaxprs(jaxpr: Jaxpr) -> Iterator[Jaxpr]:
    """The jaxprs in the params of `jaxpr`'s equations (not recursively)."""
    for eqn in jaxpr.eqns:
        yield from jaxprs_in_params(eqn.params)


def _traces() -> Iterator[Trace]:
    trace: Trace | None = current_trace()
    while trace is not None:
        yield trace
        trace = trace.parent


def unsafe_am_i_under_a_jit_DO_NOT_USE() -> bool:
    return any(isinstance(t, StagingTrace) for t in _traces())


def unsafe_am_i_under_a_vmap_DO_NOT_USE() -> bool:
    return any(isinstance(t, BatchTrace) for t in _traces())


def unsafe_get_axis_names_DO_NOT_USE() -> list[Any]:
    return [d.name for d in bound_axes() if d.name is not None]


def valid_jaxtype(x: Any) -> bool:
    """Whether `x` is a value JAX can trace (an array, a scalar, a tracer...)."""
    if isinstance(x, Tracer):
        return True
    try:
        aval = typeof(x)
    except (TypeError, ValueError):
        return False
    return getattr(aval, "dtype", None) != np.dtype(object)


def __getattr__(name: str) -> ModuleType:
    if name == "primitives":  # imported on first use: it looks every primitive up
        return importlib.import_module("lamina.extend.core.primitives")
    raise AttributeError(f"module 'lamina.extend.core' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), "primitives"})
