"""`logaddexp` and `logaddexp2` with JAX's custom derivatives, at the lax level (as JAX's
`lax.other`): jnp's functions call them, and `cumlogsumexp` differentiates through them."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core.custom_derivatives import custom_jvp
from lamina_core.ir import dtypes
from lamina_core.lax._ad_common import aval_of, const, full_like
from lamina_core.lax._elementwise import abs, add, eq, max, mul, ne, neg, sub
from lamina_core.lax._selection import select
from lamina_core.lax._transcendental import exp, exp2, log1p
from lamina_core.lax._types import Array


def _logaddexp(x1: Array, x2: Array, exp: Any, scale: float | None) -> Array:
    amax = max(x1, x2)
    scale_const = None if scale is None else const(amax, scale)
    name = "logaddexp" if scale is None else "logaddexp2"
    dtype = aval_of(x1).dtype
    if dtype.kind == "c":
        raise NotImplementedError(f"jnp.{name} of complex inputs is not supported yet")
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(f"{name} requires floating-point or complex inputs; got {dtype.name}")
    delta = sub(x1, x2)
    # Equal infinities make delta nan; their sum is then the right answer.
    is_nan, total = ne(delta, delta), add(x1, x2)
    softplus = log1p(exp(neg(abs(delta))))
    if scale_const is not None:
        softplus = mul(scale_const, softplus)
    return select(is_nan, total, add(amax, softplus))


def _replace_inf(x: Array) -> Array:
    inf = const(x, float("inf"))
    return select(eq(x, inf), full_like(x, 0), x)


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
