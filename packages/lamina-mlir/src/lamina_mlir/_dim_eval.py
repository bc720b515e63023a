"""Values of symbolic dimensions in the lowering, computed as JAX computes them.

JAX evaluates a dimension expression with Python arithmetic on traced integer scalars (its
`_DimExpr._evaluate`: each term's factors multiplied, times the coefficient, the terms
added; `floordiv` and `mod` through `divmod`, which is `jnp.divmod`, a jitted function) and
lowers the trace where the value is needed. Doing the same here gives JAX's ops: the
`@divmod` helper function called at each use, the no-op `convert` before an addition.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as _numpy  # noqa: F401  # arithmetic on tracers (`divmod`)
from lamina_core.interpreters import trace_to_jaxpr
from lamina_core.ir import ClosedJaxpr, ShapedArray, is_symbolic_dim
from lamina_mlir import _dynamic
from lamina_mlir._context import NO_TOKENS, ModuleContext
from lamina_mlir._mlir_context import IrValue


def _is_int(v: Any, k: int) -> bool:
    return isinstance(v, int | np.integer) and int(v) == k


def _add(x: Any, y: Any) -> Any:
    if _is_int(x, 0):
        return y
    if _is_int(y, 0):
        return x
    return x + y


def _mul(x: Any, y: Any) -> Any:
    if _is_int(x, 1):
        return y
    if _is_int(y, 1):
        return x
    return x * y


def evaluate(d: Any, var_value: Callable[[str], Any]) -> Any:
    """`d` (an int or an expression) computed from `var_value(name)`, the traced value of
    each variable, in JAX's order of operations. Constants are NumPy scalars of the
    dimension dtype (JAX's `dim_constant`): not weakly typed, so a traced value they meet
    is converted first, as in JAX."""
    const = _dynamic.dim_dtype().type
    if not is_symbolic_dim(d):
        return const(d)
    terms = [_mul(_term_value(term, var_value), const(coeff)) for term, coeff in d.terms]
    return functools.reduce(_add, terms)


def _term_value(term: Any, var_value: Callable[[str], Any]) -> Any:
    factors = []
    for factor, exp in term:
        value = _factor_value(factor, var_value)
        factors.append(value if exp == 1 else functools.reduce(_mul, [value] * exp))
    return functools.reduce(_mul, factors) if factors else _dynamic.dim_dtype().type(1)


def _factor_value(factor: Any, var_value: Callable[[str], Any]) -> Any:
    if factor.var is not None:
        return var_value(factor.var)
    x, y = (evaluate(o, var_value) for o in factor.operands)
    if factor.operation == "floordiv":
        return divmod(x, y)[0]
    if factor.operation == "mod":
        return divmod(x, y)[1]
    if isinstance(x, np.integer) and isinstance(y, np.integer):
        return max(x, y) if factor.operation == "max" else min(x, y)
    return lax.max(x, y) if factor.operation == "max" else lax.min(x, y)


@functools.lru_cache(maxsize=256)
def _traced(exprs: tuple[Any, ...], names: tuple[str, ...], dtype: np.dtype) -> ClosedJaxpr:
    """The jaxpr computing `exprs` from the variables `names` (scalars of `dtype`), once per
    expressions: the jitted `divmod` it calls is then one function of the module."""
    aval = ShapedArray((), dtype, weak_type=True)

    def compute(*values: Any) -> list[Any]:
        env = dict(zip(names, values, strict=True))
        return [evaluate(e, env.__getitem__) for e in exprs]

    return trace_to_jaxpr(compute, [aval] * len(names))


def lower_values(
    mctx: ModuleContext,
    exprs: Sequence[Any],
    values: Mapping[str, IrValue],
) -> list[IrValue]:
    """Emit the computation of `exprs` here, from `values`, the variables' IR values."""
    names = tuple(values)
    closed = _traced(tuple(exprs), names, _dynamic.dim_dtype())
    return _emit(mctx, closed, [values[n] for n in names])


def lower_traced(
    mctx: ModuleContext, fn: Callable[..., list[Any]], inputs: Sequence[IrValue]
) -> list[IrValue]:
    """Emit here `fn` (traced dimension values to a list of them) applied to `inputs`,
    scalars of the dimension dtype, as JAX's `lower_fun` of a dimension computation."""
    aval = ShapedArray((), _dynamic.dim_dtype(), weak_type=True)
    return _emit(mctx, trace_to_jaxpr(fn, [aval] * len(inputs)), inputs)


def _emit(mctx: ModuleContext, closed: ClosedJaxpr, inputs: Sequence[IrValue]) -> list[IrValue]:
    """`closed` (a dimension computation) lowered here on `inputs`."""
    from lamina_mlir._lower import jaxpr_subcomp  # it lowers functions whose shapes use this

    outs, _ = jaxpr_subcomp(mctx, closed.jaxpr, "", NO_TOKENS, [], *inputs, const_lowering={})
    return list(outs)
