"""`dim_as_value`: a symbolic dimension as a traced integer (JAX's primitive of that name).

A shape-polymorphic program that computes with a dimension (`jnp.mean` dividing by `b`,
`jnp.arange(b)`) stages this primitive, whose parameter is the dimension; it has no
operands. Outside tracing it has no value (the dimension has none), as in JAX; the lowering
computes it from the dimension variables.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from lamina_core.interpreters import not_differentiable
from lamina_core.ir import (
    DimExpr,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    dtypes,
    impl_rules,
    python_impl_primitives,
    set_dimension_as_value,
    value_impl_rules,
)

dim_as_value_p: Final = Primitive("dim_as_value")
not_differentiable(dim_as_value_p)


@abstract_eval_rules.register(dim_as_value_p)
def _dim_as_value_abstract_eval(*, dim: Any) -> ShapedArray:
    return ShapedArray((), dtypes.canonicalize_dtype(np.int64), weak_type=True)


def _dim_as_value_impl(*, dim: Any) -> Any:
    raise NotImplementedError(
        "Evaluation rule for 'dim_as_value' is not implemented. "
        "It seems that you are using shape polymorphism outside jax.export."
    )


# Eager evaluation refuses before compiling anything (JAX's `impl`), not in the lowering.
impl_rules.set(dim_as_value_p, _dim_as_value_impl)
value_impl_rules.set(dim_as_value_p, _dim_as_value_impl)
python_impl_primitives.add(dim_as_value_p)


def dimension_as_value(d: Any) -> Any:
    """A dimension as a value: itself if an integer, else `dim_as_value[dim=d]`."""
    if type(d) is DimExpr:
        return dim_as_value_p.bind(dim=d)
    return d


set_dimension_as_value(dimension_as_value)

__all__ = ["dim_as_value_p", "dimension_as_value"]
