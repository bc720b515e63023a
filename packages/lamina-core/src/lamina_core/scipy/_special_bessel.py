"""The modified Bessel functions of the first kind of `jax.scipy.special`, orders 0 and 1:
i0e and i1e (exponentially scaled, the `lax` primitives) and i0, i1 (their product with
exp(|x|)), staged as JAX 0.10.2 stages them."""

from __future__ import annotations

from typing import Any

from lamina_core import lax
from lamina_core.numpy import promotion as p

Array = Any


def i0e(x: Any) -> Array:
    """exp(-|x|) I0(x)."""
    (x,) = p.promote_args_inexact("i0e", x)
    return lax.bessel_i0e(x)


def i0(x: Any) -> Array:
    """I0(x), as exp(|x|) i0e(x)."""
    (x,) = p.promote_args_inexact("i0", x)
    return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i0e(x))


def i1e(x: Any) -> Array:
    """exp(-|x|) I1(x)."""
    (x,) = p.promote_args_inexact("i1e", x)
    return lax.bessel_i1e(x)


def i1(x: Any) -> Array:
    """I1(x), as exp(|x|) i1e(x)."""
    (x,) = p.promote_args_inexact("i1", x)
    return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i1e(x))
