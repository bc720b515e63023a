"""`logaddexp` and `logaddexp2` with JAX's custom derivatives, at the lax level (as JAX's
`lax.other`): jnp's functions call them, and `cumlogsumexp` differentiates through them.

For complex inputs the result is the principal branch: its imaginary part is wrapped into
`[-pi, pi)` (`[-pi/ln 2, pi/ln 2)` for base 2), and the jvp ignores infinities by real part.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core.custom_derivatives import custom_jvp
from lamina_core.ir import dtypes
from lamina_core.lax._ad_common import aval_of, const, full_like
from lamina_core.lax._elementwise import (
    abs,
    add,
    complex,
    eq,
    imag,
    lt,
    max,
    mul,
    ne,
    neg,
    real,
    rem,
    sub,
)
from lamina_core.lax._selection import select
from lamina_core.lax._transcendental import exp, exp2, log1p
from lamina_core.lax._types import Array


def _logaddexp(x1: Array, x2: Array, exp: Any, scale: float | None) -> Array:
    amax = max(x1, x2)
    scale_const = None if scale is None else const(amax, scale)
    name = "logaddexp" if scale is None else "logaddexp2"
    dtype = aval_of(x1).dtype
    if dtype.kind == "c":
        # exp(delta) cannot overflow: amax has the larger real part (lexicographic max).
        delta = sub(add(x1, x2), mul(amax, const(amax, 2)))
        softplus = log1p(exp(delta))
        if scale_const is not None:
            softplus = mul(scale_const, softplus)
        out = add(amax, softplus)
        period = np.pi if scale is None else np.pi / np.log(2)
        return complex(real(out), _wrap_between(imag(out), period))
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(f"{name} requires floating-point or complex inputs; got {dtype.name}")
    delta = sub(x1, x2)
    # Equal infinities make delta nan; their sum is then the right answer.
    is_nan, total = ne(delta, delta), add(x1, x2)
    softplus = log1p(exp(neg(abs(delta))))
    if scale_const is not None:
        softplus = mul(scale_const, softplus)
    return select(is_nan, total, add(amax, softplus))


def _wrap_between(x: Array, half_period: float) -> Array:
    """`x` wrapped into `[-half_period, half_period)`."""
    half, period = const(x, half_period), const(x, 2 * half_period)
    shifted = rem(add(x, half), period)
    # `rem` keeps the dividend's sign; a negative remainder is one period short.
    shifted = select(lt(shifted, const(x, 0)), add(shifted, period), shifted)
    return sub(shifted, half)


def _replace_inf(x: Array) -> Array:
    re_x = real(x) if aval_of(x).dtype.kind == "c" else x
    inf = const(re_x, float("inf"))
    return select(eq(re_x, inf), full_like(x, 0), x)


def _logaddexp_custom_fun(x1: Array, x2: Array) -> Array:
    return _logaddexp(x1, x2, exp, None)


def _logaddexp2_custom_fun(x1: Array, x2: Array) -> Array:
    return _logaddexp(x1, x2, exp2, 1 / np.log(2))


_logaddexp_custom_fun.__name__ = "logaddexp"
_logaddexp2_custom_fun.__name__ = "logaddexp2"
_logaddexp_custom = custom_jvp(_logaddexp_custom_fun)
_logaddexp2_custom = custom_jvp(_logaddexp2_custom_fun)


def _logaddexp_rule(custom: custom_jvp, exp: Any) -> Any:
    def rule(primals: tuple[Array, Array], tangents: tuple[Array, Array]) -> Any:
        x1, x2 = primals
        t1, t2 = tangents
        out = custom(x1, x2)
        tangent = add(
            mul(t1, exp(sub(_replace_inf(x1), _replace_inf(out)))),
            mul(t2, exp(sub(_replace_inf(x2), _replace_inf(out)))),
        )
        return out, tangent

    return rule


_logaddexp_jvp = _logaddexp_rule(_logaddexp_custom, exp)
_logaddexp2_jvp = _logaddexp_rule(_logaddexp2_custom, exp2)
_logaddexp_jvp.__name__ = "_logaddexp_jvp"
_logaddexp2_jvp.__name__ = "_logaddexp2_jvp"
_logaddexp_custom.defjvp(_logaddexp_jvp)
_logaddexp2_custom.defjvp(_logaddexp2_jvp)
