"""Evaluation: the NumPy reference evaluator and `eval_jaxpr`.

The reference evaluator runs each primitive's NumPy rule and checks the result against the
primitive's abstract evaluation, so the reference is also a test of the type rules. It is the
eager evaluator core installs; lamina-runtime replaces it with XLA execution through
`tracing.install_eager_impl`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lamina_core.config import replaying_equations
from lamina_core.ir import (
    AbstractValue,
    ClosedJaxpr,
    Jaxpr,
    Literal,
    Primitive,
    ShapedArray,
    Var,
    abstract_eval_rules,
    dtypes,
    float0_zeros,
    impl_rules,
    name_stack_var,
    python_impl_primitives,
    value_impl_rules,
)
from lamina_core.trace._tracing import install_eager_impl
from lamina_core.trace._values import by_reference_types, to_numpy, typeof


def _conform(value: Any, aval: AbstractValue, prim: Primitive) -> Any:
    if not isinstance(aval, ShapedArray):
        return value
    if aval.dtype == dtypes.float0:
        return float0_zeros(aval.shape)  # float0 values are host arrays of their own type
    array = np.asarray(value)
    if array.shape != aval.shape:
        raise AssertionError(
            f"NumPy reference rule of '{prim.name}' returned shape {array.shape}, but its "
            f"abstract evaluation says {aval.str_short(True)}"
        )
    return array.astype(aval.dtype, copy=False)


HighImpl = Callable[[Primitive, Sequence[Any], dict[str, Any]], Any]
_high_impl: HighImpl | None = None


def install_high_impl(impl: HighImpl) -> None:
    """How the reference evaluator applies a primitive to hi-typed values or producing them:
    lamina-hijax installs one evaluating the primitive's lowering to arrays."""
    global _high_impl
    _high_impl = impl


def reference_impl(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """Apply `prim` to concrete values with its NumPy rule; results are NumPy arrays."""
    if prim in python_impl_primitives:
        return value_impl_rules[prim](*args, **params)
    in_avals = [typeof(x) for x in args]
    out_aval = abstract_eval_rules[prim](*in_avals, **params)
    on_values = value_impl_rules.get(prim)
    if on_values is not None:
        return on_values(*args, **params)
    if _high_impl is not None and any(
        a.is_high
        for a in (*in_avals, *(out_aval if prim.multiple_results else [out_aval]))  # type: ignore[misc]  # a sequence for multiple results
    ):
        return _high_impl(prim, args, params)
    # Mutable values (Refs) are passed as they are: a call's body reads and writes them.
    out = impl_rules[prim](
        *[x if type(x) in by_reference_types else to_numpy(x) for x in args], **params
    )
    if prim.multiple_results:
        return [_conform(v, a, prim) for v, a in zip(out, out_aval, strict=True)]  # type: ignore[arg-type]  # a sequence for multi-result primitives
    return _conform(out, out_aval, prim)  # type: ignore[arg-type]  # one aval for single-result primitives


install_eager_impl(reference_impl)


def eval_jaxpr(jaxpr: Jaxpr | ClosedJaxpr, consts: Sequence[Any], *args: Any) -> list[Any]:
    """Evaluate `jaxpr` on `args` by binding each equation's primitive.

    Under no transformation this computes values (with the installed eager evaluator); under a
    trace it re-traces, which is how transformations of jaxprs work.
    """
    if isinstance(jaxpr, ClosedJaxpr):
        if consts:
            raise TypeError("eval_jaxpr: a ClosedJaxpr carries its consts; pass `consts=()`")
        consts, jaxpr = jaxpr.consts, jaxpr.jaxpr
    if len(consts) != len(jaxpr.constvars) or len(args) != len(jaxpr.invars):
        raise TypeError(
            f"eval_jaxpr: the jaxpr takes {len(jaxpr.constvars)} consts and "
            f"{len(jaxpr.invars)} arguments, got {len(consts)} and {len(args)}"
        )
    env: dict[Var, Any] = dict(zip(jaxpr.constvars, consts, strict=True))
    env.update(zip(jaxpr.invars, args, strict=True))

    def read(atom: Var | Literal) -> Any:
        return atom.val if isinstance(atom, Literal) else env[atom]

    base = name_stack_var.get()
    with replaying_equations():
        for eqn in jaxpr.eqns:
            ins = [read(v) for v in eqn.invars]
            names = eqn.source_info.name_stack
            if names:  # re-run under the names it was staged with, below the current ones
                token = name_stack_var.set(base + names)
                try:
                    out = eqn.primitive.bind(*ins, **eqn.params)
                finally:
                    name_stack_var.reset(token)
            else:
                out = eqn.primitive.bind(*ins, **eqn.params)
            if eqn.primitive.multiple_results:
                env.update(zip(eqn.outvars, out, strict=True))
            else:
                env[eqn.outvars[0]] = out
    return [read(v) for v in jaxpr.outvars]


def jaxpr_as_fun(closed: ClosedJaxpr) -> Callable[..., list[Any]]:
    """`closed` as a Python function of its arguments returning the list of its outputs, so
    a program read back (`parse`, `from_json`) can be jitted, differentiated and batched."""
    if not isinstance(closed, ClosedJaxpr):
        raise TypeError(f"jaxpr_as_fun: expected a ClosedJaxpr, got {type(closed).__name__}")

    def fun(*args: Any) -> list[Any]:
        return eval_jaxpr(closed.jaxpr, closed.consts, *args)

    fun.__name__ = fun.__qualname__ = "jaxpr_as_fun"
    return fun
