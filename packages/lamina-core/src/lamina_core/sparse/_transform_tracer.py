"""`sparsify` itself, and its tracer-based way (`use_tracer=True`): the function runs once with
`SparseTracer` arguments, each a `SparsifyValue` of a `SparsifyEnv` whose buffers are values of
the enclosing trace. A `SparseTrace` applies a primitive through its sparse rule where an
operand is sparse, and through the enclosing trace otherwise.

JAX's trace consults only `sparse_rules_bcoo`, but JAX's `jnp` functions are inlined `jit`s,
whose BCOO rule evaluates their jaxpr with the BCSR table where an operand is BCSR; Lamina's
`jnp` binds primitives directly, so this trace takes the BCSR table for BCSR operands, giving
JAX's results and errors for `jnp`-level code; a call's BCOO rule (`jit`, `cond`, ...) serves
every format, as in JAX.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from lamina_core.custom_derivatives import custom_jvp_call_p, custom_vjp_call_p
from lamina_core.ir import AbstractValue, ClosedJaxpr, Primitive
from lamina_core.sparse._transform import (
    SparsifyEnv,
    SparsifyValue,
    _is_sparse_obj,
    _raise_unimplemented_primitive,
    arrays_to_spvalues,
    sparse_rules_bcoo,
    sparse_rules_bcsr,
    sparsify_with_interpreter,
    spvalues_to_arrays,
    spvalues_to_avals,
)
from lamina_core.sparse._transform_calls import call_primitives
from lamina_core.trace import (
    Trace,
    Tracer,
    bind_with_trace,
    call_under,
    current_trace,
    jaxpr_as_fun,
    set_current_trace,
)
from lamina_core.tree.tree_util import tree_flatten, tree_unflatten


class SparseTracer(Tracer):
    """A value of a `SparseTrace`: a dense or sparse array as a `SparsifyValue`."""

    __slots__ = ("_aval", "_spvalue")
    jax_name = "SparseTracer"

    def __init__(self, trace: SparseTrace, *, spvalue: SparsifyValue) -> None:
        super().__init__(trace)
        self._aval: AbstractValue = spvalues_to_avals(trace.spenv, [spvalue])[0]
        self._spvalue = spvalue

    @property
    def aval(self) -> AbstractValue:
        return self._aval

    @property
    def spenv(self) -> SparsifyEnv:
        trace = self._trace
        assert isinstance(trace, SparseTrace)
        return trace.spenv

    def full_lower(self) -> SparseTracer:
        return self


class SparseTrace(Trace):
    """`sparsify` inside `parent`, over the buffers of `spenv`. Identity is intended.

    `tag` names the `sparsify` call: a trace owns the tracers of every trace with its tag.
    """

    __slots__ = ("spenv", "tag")

    def __init__(self, parent: Trace, tag: object, spenv: SparsifyEnv) -> None:
        super().__init__(parent)
        self.tag = tag
        self.spenv = spenv

    @property
    def parent_trace(self) -> Trace:
        parent = self.parent
        assert parent is not None
        return parent

    def _owns(self, val: Any) -> bool:
        return isinstance(val, SparseTracer) and val._trace.tag is self.tag  # type: ignore[attr-defined]  # a SparseTrace's

    def to_sparse_tracer(self, val: Any) -> SparseTracer:
        if self._owns(val):
            tracer: SparseTracer = val
            return tracer
        (spvalue,) = call_under(self.parent_trace, arrays_to_spvalues, self.spenv, [val])
        return SparseTracer(self, spvalue=spvalue)

    def stage_value(self, value: Any) -> Any:
        if self._owns(value):
            return value
        return self.to_sparse_tracer(self.parent_trace.stage_value(value))

    def process_primitive(
        self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]
    ) -> Any:
        if prim is custom_jvp_call_p:
            # As JAX's: the function is sparsified through its own definition, its rule
            # dropped.
            return self._inline(args, params["call_jaxpr"])
        if prim is custom_vjp_call_p:
            # JAX's SparseTrace has no custom_vjp handling; its base class's error, as JAX
            # names the class.
            raise NotImplementedError(
                "<class 'jax.experimental.sparse.transform.SparseTrace'> must override "
                "process_custom_vjp_call to handle custom_vjp primitives"
            )
        tracers = [self.to_sparse_tracer(x) for x in args]
        spvalues = [t._spvalue for t in tracers]
        parent = self.parent_trace
        if any(v.is_sparse() for v in spvalues):
            rule = sparse_rules_bcoo.get(prim)
            if any(v.is_bcsr() for v in spvalues) and prim not in call_primitives:
                rule = sparse_rules_bcsr.get(prim)
            if rule is None:
                _raise_unimplemented_primitive(prim)
            assert rule is not None
            out_spvalues = call_under(parent, rule, self.spenv, *spvalues, **params)
        else:
            bufs = [self.spenv.data(v) for v in spvalues]
            out = bind_with_trace(parent, prim, bufs, params)
            out_list = out if prim.multiple_results else [out]
            out_spvalues = call_under(parent, arrays_to_spvalues, self.spenv, list(out_list))
        outs = [SparseTracer(self, spvalue=v) for v in out_spvalues]
        return outs if prim.multiple_results else outs[0]

    def _inline(self, args: Sequence[Any], call_jaxpr: ClosedJaxpr) -> list[Any]:
        with set_current_trace(self):
            return jaxpr_as_fun(call_jaxpr)(*args)


def sparsify_with_tracer(f: Callable[..., Any]) -> Callable[..., Any]:
    """`sparsify(f, use_tracer=True)`: `f` run once on `SparseTracer`s (positional arguments
    only, as JAX's)."""

    @functools.wraps(f)
    def _wrapped(*args: Any) -> Any:
        args_flat, in_tree = tree_flatten(args, is_leaf=_is_sparse_obj)
        spenv = SparsifyEnv()
        spvalues = arrays_to_spvalues(spenv, args_flat)
        trace = SparseTrace(current_trace(), object(), spenv)
        with set_current_trace(trace):
            tracers = [SparseTracer(trace, spvalue=v) for v in spvalues]
            out = f(*tree_unflatten(in_tree, tracers))
            out_flat, out_tree = tree_flatten(out)
            out_spvalues = [trace.to_sparse_tracer(x)._spvalue for x in out_flat]
        return tree_unflatten(out_tree, spvalues_to_arrays(spenv, out_spvalues))

    return _wrapped


def sparsify(f: Callable[..., Any], use_tracer: bool = False) -> Callable[..., Any]:
    """Experimental sparsification transform: `f`, written for dense arrays, made to accept
    BCOO (and BCSR) arrays, as long as each primitive it applies to a sparse operand has a
    sparse rule. With `use_tracer=True`, `f` runs on `SparseTracer`s instead of being traced
    to a jaxpr first.

    Example:
        >>> from lamina.experimental import sparse
        >>> @sparse.sparsify
        ... def f(M, v):
        ...     return 2 * M.T @ v
    """
    if use_tracer:
        return sparsify_with_tracer(f)
    return sparsify_with_interpreter(f)


__all__ = ["SparseTrace", "SparseTracer", "sparsify", "sparsify_with_tracer"]
