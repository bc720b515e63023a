"""Differentiation rules of `polygamma` and `digamma`, as JAX's: `polygamma(m, x)` has slope
`polygamma(m + 1, x)` in x and none in m (a ValueError when m carries a tangent), and digamma's
slope is `polygamma(1, x)`. `zeta` has no rule in JAX's `lax` either: differentiating it raises
JAX's error (`jax.scipy.special.zeta` brings its own)."""

from __future__ import annotations

from typing import Any

from lamina_core.interpreters import defjvp, not_differentiable
from lamina_core.lax import _transcendental as tr
from lamina_core.lax import _zeta as z
from lamina_core.lax._ad_common import const
from lamina_core.lax._elementwise import add, mul


def _order_tangent(g: Any, m: Any, x: Any) -> Any:
    raise ValueError("polygamma gradient with respect to m is not supported")


def _argument_tangent(g: Any, m: Any, x: Any) -> Any:
    return mul(g, z.polygamma(add(m, const(m, 1)), x))


defjvp(z.polygamma_p, _order_tangent, _argument_tangent)
defjvp(tr.digamma_p, lambda g, x: mul(g, z.polygamma(const(x, 1), x)))
not_differentiable(z.zeta_p)
