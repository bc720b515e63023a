"""The regularized incomplete gamma functions `igamma` (P), `igammac` (Q) and `igamma_grad_a`
(dP/da), elementwise binary primitives on floats; the regularized incomplete beta function
`regularized_incomplete_beta` (`lax.betainc`), a ternary one; and `random_gamma_grad`, which
JAX does not make a primitive: it stages its series and continued fraction (see
`_igamma_impl`) in place.

The NumPy references (`_igamma_refs`) compute in float64. The lowerings trace `_igamma_impl`,
XLA's algorithms as JAX lowers them, so compiled values are JAX's.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from lamina_core.ir import AbstractValue, Primitive, ShapedArray, abstract_eval_rules, impl_rules
from lamina_core.lax import _checks as c
from lamina_core.lax import _igamma_impl as impl
from lamina_core.lax import _igamma_refs as refs
from lamina_core.lax import _nary as n
from lamina_core.lax._types import Array

igamma_p: Final = n.binary("igamma", n.FLOAT, n.in_float32(refs.igamma))
igammac_p: Final = n.binary("igammac", n.FLOAT, n.in_float32(refs.igammac))
igamma_grad_a_p: Final = n.binary("igamma_grad_a", n.FLOAT, n.in_float32(refs.igamma_grad_a))


def _ternary(name: str, reference: n.Reference) -> Primitive:
    """An elementwise float primitive of three broadcasting operands of one dtype (JAX's
    `standard_naryop` checks and messages)."""
    prim = Primitive(name)

    def abstract_eval(*operands: AbstractValue) -> ShapedArray:
        avals = [c.array_aval(name, v) for v in operands]
        shape = c.broadcast_shapes(name, avals)
        n.check_operand_dtypes(name, avals, [n.FLOAT] * 3)
        dtype = n.check_same_dtypes(name, avals)
        return ShapedArray(shape, dtype, all(a.weak_type for a in avals))

    def impl_rule(*args: np.ndarray) -> Any:
        out = abstract_eval(*(ShapedArray(np.shape(v), np.result_type(v)) for v in args))
        with np.errstate(all="ignore"):
            return np.asarray(reference(*args)).astype(out.dtype, copy=False)

    abstract_eval_rules.set(prim, abstract_eval)
    impl_rules.set(prim, impl_rule)
    return prim


regularized_incomplete_beta_p: Final = _ternary(
    "regularized_incomplete_beta", n.in_float32(refs.betainc)
)


def igamma(a: Array, x: Array) -> Array:
    """The regularized lower incomplete gamma function P(a, x)."""
    return igamma_p.bind(a, x)


def igammac(a: Array, x: Array) -> Array:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return igammac_p.bind(a, x)


def igamma_grad_a(a: Array, x: Array) -> Array:
    """The derivative of P(a, x) in a."""
    return igamma_grad_a_p.bind(a, x)


def betainc(a: Array, b: Array, x: Array) -> Array:
    """The regularized incomplete beta function I_x(a, b)."""
    return regularized_incomplete_beta_p.bind(a, b, x)


_random_gamma_grad: Final = impl.up_and_broadcast(impl.random_gamma_grad_impl)


def random_gamma_grad(a: Array, x: Array) -> Array:
    """d x / d a for a sample x of Gamma(a, 1), at fixed P(a, x) (the reparameterization
    gradient of `random.gamma`). Staged in place, as in JAX: there is no primitive."""
    return _random_gamma_grad(a, x)


__all__ = [
    "betainc",
    "igamma",
    "igamma_grad_a",
    "igamma_grad_a_p",
    "igamma_p",
    "igammac",
    "igammac_p",
    "random_gamma_grad",
    "regularized_incomplete_beta_p",
]
