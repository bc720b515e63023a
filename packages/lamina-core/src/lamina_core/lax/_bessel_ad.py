"""Differentiation rules of `bessel_i0e` and `bessel_i1e`, as JAX's: `i0e' = i1e - sign(x) i0e`
and `i1e' = i0e - i1e (sign(x) + 1/x)`, the latter taken as its limit 1/2 where |x| is below
the dtype's epsilon (1/x would overflow there)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core.interpreters import defjvp2
from lamina_core.ir import dtypes
from lamina_core.lax import _bessel as b
from lamina_core.lax._ad_common import aval_of, full_like
from lamina_core.lax._elementwise import abs as abs_
from lamina_core.lax._elementwise import add, gt, mul, reciprocal, sign, sub
from lamina_core.lax._selection import select
from lamina_core.lax._structural import convert_element_type


def _i0e_tangent(g: Any, ans: Any, x: Any) -> Any:
    return mul(g, sub(b.bessel_i1e(x), mul(sign(x), ans)))


def _i1e_tangent(g: Any, ans: Any, x: Any) -> Any:
    aval = aval_of(x)
    eps = np.array(dtypes.finfo(aval.dtype).eps, aval.dtype)
    magnitude = abs_(x)
    if aval.weak_type:
        # JAX compares |x| with a NumPy scalar epsilon, which makes a weak |x| strong.
        magnitude = convert_element_type(magnitude, aval.dtype)
    not_tiny = gt(magnitude, eps)
    safe_x = select(not_tiny, x, full_like(x, eps))
    slope = sub(b.bessel_i0e(safe_x), mul(ans, add(sign(safe_x), reciprocal(safe_x))))
    return mul(g, select(not_tiny, slope, full_like(x, 0.5)))


defjvp2(b.bessel_i0e_p, _i0e_tangent)
defjvp2(b.bessel_i1e_p, _i1e_tangent)
