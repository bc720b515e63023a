"""Differentiation rules of the transcendental and special-function primitives, as JAX's.

(`sin`, `cos`, `exp`, `log` and `tanh` are with the first elementwise rules.)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core.interpreters import defjvp, defjvp2
from lamina_core.lax import _elementwise as e
from lamina_core.lax import _transcendental as tr
from lamina_core.lax._ad_common import const, one

_HIGHEST = tr.AccuracyMode.HIGHEST


def _one(x: Any) -> Any:
    return one(x)


defjvp(tr.log1p_p, lambda g, x, **_: e.div(g, e.add(x, _one(x))))
defjvp2(
    tr.expm1_p,
    lambda g, ans, x, accuracy: (
        e.mul(g, tr.exp(x, accuracy=accuracy))
        if accuracy is _HIGHEST
        else e.mul(g, e.add(ans, _one(ans)))
    ),
)
defjvp2(tr.exp2_p, lambda g, ans, x, **_: e.mul(tr.log(const(x, 2)), e.mul(g, ans)))
defjvp2(
    tr.logistic_p,
    lambda g, ans, x, accuracy: (
        e.mul(g, e.mul(ans, tr.logistic(e.neg(x))))
        if accuracy is _HIGHEST
        else e.mul(g, e.mul(ans, e.sub(_one(ans), ans)))
    ),
)
defjvp2(tr.tan_p, lambda g, ans, x, **_: e.mul(g, e.add(const(x, 1), e.square(ans))))
defjvp2(tr.sqrt_p, lambda g, ans, x, **_: e.mul(g, e.div(const(x, 0.5), ans)))
defjvp2(tr.rsqrt_p, lambda g, ans, x, **_: e.mul(g, e.mul(const(x, -0.5), e.div(ans, x))))
defjvp2(tr.cbrt_p, lambda g, ans, x, **_: e.mul(g, e.mul(const(x, 1 / 3), e.integer_pow(ans, -2))))
defjvp(tr.asin_p, lambda g, x: e.mul(g, tr.rsqrt(e.sub(const(x, 1), e.square(x)))))
defjvp(tr.acos_p, lambda g, x: e.mul(g, e.neg(tr.rsqrt(e.sub(const(x, 1), e.square(x))))))
defjvp(tr.atan_p, lambda g, x: e.div(g, e.add(const(x, 1), e.square(x))))
defjvp(
    tr.atan2_p,
    lambda g, x, y: e.mul(g, e.div(y, e.add(e.square(x), e.square(y)))),
    lambda g, x, y: e.mul(g, e.div(e.neg(x), e.add(e.square(x), e.square(y)))),
)
defjvp(tr.sinh_p, lambda g, x: e.mul(g, tr.cosh(x)))
defjvp(tr.cosh_p, lambda g, x: e.mul(g, tr.sinh(x)))
defjvp(tr.asinh_p, lambda g, x: e.mul(g, tr.rsqrt(e.add(e.square(x), _one(x)))))
defjvp(tr.acosh_p, lambda g, x: e.mul(g, tr.rsqrt(e.sub(e.square(x), _one(x)))))
defjvp(
    tr.atanh_p,
    lambda g, x: e.mul(e.reciprocal(e.add(_one(x), x)), e.div(g, e.sub(_one(x), x))),
)
defjvp(
    tr.erf_p,
    lambda g, x: e.mul(const(x, 2.0 / np.sqrt(np.pi)), e.mul(g, tr.exp(e.neg(e.square(x))))),
)
defjvp(
    tr.erfc_p,
    lambda g, x: e.mul(const(x, -2.0 / np.sqrt(np.pi)), e.mul(g, tr.exp(e.neg(e.square(x))))),
)
defjvp2(
    tr.erf_inv_p,
    lambda g, ans, x: e.mul(const(x, np.sqrt(np.pi) / 2.0), e.mul(g, tr.exp(e.square(ans)))),
)
defjvp(tr.lgamma_p, lambda g, x: e.mul(g, tr.digamma(x)))
# digamma's rule, polygamma(1, x), is with polygamma's in `_zeta_ad`.
