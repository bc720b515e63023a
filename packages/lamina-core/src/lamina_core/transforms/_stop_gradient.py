"""`stop_gradient`: the identity, with a zero derivative, as JAX's.

The primitive and its core rules sit here, under `custom_derivatives` and `lax`, because both
bind it (JAX keeps `stop_gradient_p` in `ad_util` for the same reason); it needs nothing but the
interpreters. `lax` re-exports it and registers its sharding rule. Forward-mode tracers are
unwrapped before binding (as JAX does), so `stop_gradient` under `jvp` stages on the primal;
under `grad` its jvp rule gives a zero tangent; under `vmap` it is elementwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from lamina_core.interpreters import (
    AxisData,
    BatchDim,
    JVPTracer,
    batching_rules,
    jvp_rules,
    zero_of,
)
from lamina_core.ir import AbstractValue, Primitive, abstract_eval_rules, impl_rules
from lamina_core.tree import tree_util

stop_gradient_p: Final = Primitive("stop_gradient")


@abstract_eval_rules.register(stop_gradient_p)
def _stop_gradient_abstract_eval(x: AbstractValue) -> AbstractValue:
    return x


@impl_rules.register(stop_gradient_p)
def _stop_gradient_impl(x: np.ndarray) -> np.ndarray:
    return x


def _stop(x: Any) -> Any:
    while isinstance(x, JVPTracer):
        x = x.primal
    return stop_gradient_p.bind(x)


def stop_gradient(x: Any) -> Any:
    """`x` (any pytree of arrays), through which no derivative flows."""
    return tree_util.tree_map(_stop, x)


def _stop_gradient_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    (x,) = primals
    return stop_gradient(x), zero_of(x)


def _stop_gradient_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim]
) -> tuple[Any, BatchDim]:
    (x,), (bdim,) = vals, dims
    return stop_gradient(x), bdim


jvp_rules.set(stop_gradient_p, _stop_gradient_jvp)
batching_rules.set(stop_gradient_p, _stop_gradient_batch)

__all__ = ["stop_gradient", "stop_gradient_p"]
