"""The Hurwitz zeta and polygamma functions of `jax.scipy.special`, staged as JAX 0.10.2 stages
them: `zeta` calls `lax.zeta` under a custom JVP that differentiates a truncated Euler-Maclaurin
expansion of zeta (there is no closed form for its slope in x), and `polygamma` checks that its
order is an integer before promoting both operands to a float dtype for `lax.polygamma`.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb, factorial
from typing import Any, Final

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.custom_derivatives import custom_jvp
from lamina_core.ir import dtypes
from lamina_core.numpy import dtype_of, shape_of
from lamina_core.numpy import promotion as p
from lamina_core.transforms import jvp as _api_jvp

Array = Any

_RIEMANN_ONLY: Final = (
    "Riemann zeta function not implemented; pass q != None to compute the Hurwitz Zeta function."
)


def _bernoulli_even(count: int) -> list[Fraction]:
    """B_2, B_4, ..., B_2count, from the recurrence sum_j C(n+1, j) B_j = 0."""
    numbers = [Fraction(1)]
    for n in range(1, 2 * count + 1):
        total = sum((comb(n + 1, j) * numbers[j] for j in range(n)), Fraction(0))
        numbers.append(-total / (n + 1))
    return numbers[2::2]


_FACTORIAL_OVER_BERNOULLI: Final = tuple(
    float(factorial(2 * k) / b) for k, b in enumerate(_bernoulli_even(16), start=1)
)
"""(2k)! / B_2k for k = 1..16, the divisors of the expansion's correction terms."""


@custom_jvp
def zeta(x: Any, q: Any = None) -> Array:
    """The Hurwitz zeta function, the sum over n >= 0 of (q + n)**-x (q is required)."""
    if q is None:
        raise NotImplementedError(_RIEMANN_ONLY)
    x, q = p.promote_args_inexact("zeta", x, q)
    return lax.zeta(x, q)


def _zeta_series_expansion(x: Any, q: Any = None) -> Array:
    """zeta(x, q) as N direct terms, the integral from q + N and M Euler-Maclaurin corrections
    (Johansson 2015, formula 5), written with differentiable operations."""
    if q is None:
        raise NotImplementedError(_RIEMANN_ONLY)
    s, a = p.promote_args_inexact("zeta", x, q)
    scalar = np.dtype(dtype_of(a)).type
    s_, a_ = jnp.expand_dims(s, -1), jnp.expand_dims(a, -1)
    terms = scalar(8) if np.dtype(dtype_of(a)) == np.float32 else scalar(16)
    lead = tuple(range(len(shape_of(a))))
    k = jnp.expand_dims(np.arange(terms, dtype=terms.dtype), lead)
    direct = jnp.sum((a_ + k) ** -s_, -1)
    integral = lax.div((a + terms) ** (scalar(1) - s), s - scalar(1))
    first = (a + terms) ** -s
    m = jnp.expand_dims(np.arange(2 * terms, dtype=terms.dtype), tuple(range(len(shape_of(s)))))
    ratios = (s_ + m) / (a_ + terms)
    rising = jnp.cumprod(ratios, -1)[..., ::2]
    rising = jnp.clip(rising, max=dtypes.finfo(scalar).max)
    count = shape_of(rising)[-1]
    divisors = np.expand_dims(np.array(_FACTORIAL_OVER_BERNOULLI[:count], dtype=scalar), lead)
    rising = rising / divisors
    corrections = first * (scalar(0.5) + rising.sum(-1))
    return direct + integral + corrections


def _series_jvp(primals: Any, tangents: Any) -> Any:
    return _api_jvp(_zeta_series_expansion, primals, tangents)


# JAX's rule is `partial(jvp, <series>)`, which its jaxprs print as `jvp`.
_series_jvp.__name__ = "jvp"
zeta.defjvp(_series_jvp)


def polygamma(n: Any, x: Any) -> Array:
    """The n-th derivative of digamma at x, for integer n."""
    if not dtypes.issubdtype(dtype_of(n), np.integer):
        raise ValueError(
            f"Argument `n` to polygamma must be of integer type. Got dtype {dtype_of(n)}."
        )
    n_arr, x_arr = p.promote_args_inexact("polygamma", n, x)
    if dtypes.issubdtype(dtype_of(x_arr), np.complexfloating):
        raise ValueError("polygamma does not support complex-valued inputs.")
    return lax.polygamma(n_arr, x_arr)
