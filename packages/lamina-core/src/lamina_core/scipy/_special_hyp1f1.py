"""Kummer's confluent hypergeometric function `hyp1f1(a, b, x)` of `jax.scipy.special`,
computed as JAX 0.10.2 computes it (Pearson, Olver and Porter 2014, arXiv:1407.7786):

- |x| < 100: the Taylor series (their eq. 3.2, method (a)), summed in a `while_loop` until a
  term is below eps relative to the sum or 250 terms;
- otherwise the asymptotic expansion for large real x (eq. 3.8), times
  gamma(b) / gamma(a) e**x x**(a - b);
- the closed forms 1 (a = 0), e**x (a = b) and inf (b = 0) chosen by `select_n`.

Elementwise (`vectorize`) under `jit`. A `custom_jvp` with one rule per argument: series in a
and b with digamma weights, and (a / b) 1F1(a + 1, b + 1, x) in x.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.custom_derivatives import custom_jvp
from lamina_core.ir import dtypes
from lamina_core.numpy import dtype_of
from lamina_core.numpy import promotion as p
from lamina_core.scipy._special_gamma import digamma, gamma
from lamina_core.transforms import Jitted

Array = Any
State = tuple[Any, Any, Any]

_MAX_TERMS: Final = 250


def _converging(eps: Any) -> Any:
    def cond(state: State) -> Any:
        serie, k, term = state
        return (k < _MAX_TERMS) & (lax.abs(term) / lax.abs(serie) > eps)

    return cond


def _taylor(a: Array, b: Array, x: Array) -> Array:
    def body(state: State) -> State:
        serie, k, term = state
        serie += term
        term *= (a + k) / (b + k) * x / (k + 1)
        return serie, k + 1, term

    eps = dtypes.finfo(dtype_of(x)).eps
    return lax.while_loop(_converging(eps), body, (1, 1, a / b * x))[0]


def _asymptotic(a: Array, b: Array, x: Array) -> Array:
    def body(state: State) -> State:
        serie, k, term = state
        serie += term
        term *= (b - a + k) * (1 - a + k) / (k + 1) / x
        return serie, k + 1, term

    eps = dtypes.finfo(dtype_of(x)).eps
    serie = lax.while_loop(_converging(eps), body, (1, 1, (b - a) * (1 - a) / x))[0]
    return gamma(b) / gamma(a) * lax.exp(x) * x ** (a - b) * serie


def _hyp1f1_of(a: Any, b: Any, x: Any) -> Array:
    a, b, x = p.promote_args_inexact("hyp1f1", a, b, x)
    if dtypes.issubdtype(dtype_of(x), np.complexfloating):
        raise ValueError("hyp1f1 does not support complex-valued inputs.")
    result = lax.cond(lax.abs(x) < 100, _taylor, _asymptotic, a, b, x)
    index = (a == 0) * 1 + ((a == b) & (a != 0)) * 2 + ((b == 0) & (a != 0)) * 3
    dtype = dtype_of(x)
    return lax.select_n(
        index, result, jnp.array(1, dtype=dtype), jnp.exp(x), jnp.array(np.inf, dtype=dtype)
    )


_hyp1f1_of.__name__ = _hyp1f1_of.__qualname__ = "hyp1f1"  # the name its jit prints, as in JAX
hyp1f1: Final = custom_jvp(Jitted(jnp.vectorize(_hyp1f1_of)))
"""The confluent hypergeometric function 1F1(a; b; x) = sum_k (a)_k / (b)_k x**k / k!."""


def _da_of(a: Array, b: Array, x: Array) -> Array:
    def body(state: State) -> State:
        serie, k, term = state
        serie += term * (digamma(a + k) - digamma(a))
        term *= (a + k) / (b + k) * x / (k + 1)
        return serie, k + 1, term

    eps = dtypes.finfo(dtype_of(x)).eps
    return lax.while_loop(_converging(eps), body, (0, 1, a / b * x))[0]


def _db_of(a: Array, b: Array, x: Array) -> Array:
    def body(state: State) -> State:
        serie, k, term = state
        serie += term * (digamma(b) - digamma(b + k))
        term *= (a + k) / (b + k) * x / (k + 1)
        return serie, k + 1, term

    eps = dtypes.finfo(dtype_of(x)).eps
    return lax.while_loop(_converging(eps), body, (0, 1, a / b * x))[0]


def _dx_of(a: Array, b: Array, x: Array) -> Array:
    return a / b * hyp1f1(a + 1, b + 1, x)


_da_of.__name__ = _da_of.__qualname__ = "_hyp1f1_a_derivative"
_db_of.__name__ = _db_of.__qualname__ = "_hyp1f1_b_derivative"
_dx_of.__name__ = _dx_of.__qualname__ = "_hyp1f1_x_derivative"
_hyp1f1_da: Final = Jitted(jnp.vectorize(_da_of))
_hyp1f1_db: Final = Jitted(jnp.vectorize(_db_of))
_hyp1f1_dx: Final = Jitted(_dx_of)

hyp1f1.defjvps(
    lambda a_dot, ans, a, b, x: _hyp1f1_da(a, b, x) * a_dot,
    lambda b_dot, ans, a, b, x: _hyp1f1_db(a, b, x) * b_dot,
    lambda x_dot, ans, a, b, x: _hyp1f1_dx(a, b, x) * x_dot,
)
