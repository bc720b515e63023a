"""Differentiation rules of the incomplete gamma and beta primitives, as JAX's.

`igamma`: dP/da is `igamma_grad_a`, dP/dx the gamma density `exp(-x + (a - 1) log x - lgamma a)`;
`igammac` has the negated slopes. `regularized_incomplete_beta` differentiates in x only (the
beta density); a tangent on a or b raises JAX's ValueError. `igamma_grad_a` has no rule in
JAX: differentiating it raises JAX's error.
"""

from __future__ import annotations

from typing import Any

from lamina_core.interpreters import defjvp, not_differentiable
from lamina_core.lax import _igamma as ig
from lamina_core.lax._ad_common import aval_of, full_like
from lamina_core.lax._elementwise import add, mul, neg, sub
from lamina_core.lax._structural import _convert_element_type
from lamina_core.lax._transcendental import exp, lgamma, log, log1p

# The formulas bind `lax` ops rather than use operators: closed-over NumPy operands then stage
# as JAX's (device array) operands do, instead of being computed in NumPy.


def _one(x: Any) -> Any:
    """A weakly typed 1 of `x`'s dtype: JAX's Python scalar in `x - 1`."""
    return _convert_element_type(1, aval_of(x).dtype, True)


def _gamma_density(g: Any, a: Any, x: Any) -> Any:
    log_density = sub(add(neg(x), mul(sub(a, full_like(a, 1)), log(x))), lgamma(a))
    return mul(g, exp(log_density))


def _igamma_a(g: Any, a: Any, x: Any) -> Any:
    return mul(g, ig.igamma_grad_a(a, x))


def _beta_in_ab(g: Any, a: Any, b: Any, x: Any) -> Any:
    raise ValueError("Betainc gradient with respect to a and b not supported.")


def _beta_density(g: Any, a: Any, b: Any, x: Any) -> Any:
    log_beta = sub(add(lgamma(a), lgamma(b)), lgamma(add(a, b)))
    in_b = mul(sub(b, _one(b)), log1p(neg(x)))
    log_density = sub(add(in_b, mul(sub(a, _one(a)), log(x))), log_beta)
    return mul(exp(log_density), g)


defjvp(ig.igamma_p, _igamma_a, _gamma_density)
defjvp(
    ig.igammac_p,
    lambda g, a, x: neg(_igamma_a(g, a, x)),
    lambda g, a, x: neg(_gamma_density(g, a, x)),
)
defjvp(ig.regularized_incomplete_beta_p, _beta_in_ab, _beta_in_ab, _beta_density)
not_differentiable(ig.igamma_grad_a_p)
