"""`jax.scipy.integrate.trapezoid`: `jnp.trapezoid` in a jit of its own with `axis` static, as
JAX 0.10.2 stages it (so the jaxpr nests one `jit[name=trapezoid]` inside another)."""

from __future__ import annotations

from functools import partial
from typing import Any

from lamina_core import numpy as jnp
from lamina_core.transforms import Jitted

Array = Any

__all__ = ["trapezoid"]


@partial(Jitted, static_argnames=("axis",))
def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Array:
    """The integral of `y` along `axis` by the composite trapezoidal rule, at sample points `x`
    or, without them, at a constant spacing `dx`."""
    return jnp.trapezoid(y, x, dx, axis)
