"""`bernoulli(n)` of `jax.scipy.special`: the Bernoulli numbers B_0..B_n (B_1 = -1/2), built as
JAX 0.10.2 builds them. The even ones from B_4 on come from the zeta series of Chowla and
Hartung: B_2k = (-1)**(k+1) 2 (2k)! / (2 pi)**2k zeta(2k), the factorial-over-power prefix as
a cumulative product and zeta(2k) summed over its first 49 terms (2**-50 is below float64's
eps); the odd ones past B_1 are zero."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.numpy import at

Array = Any


def bernoulli(n: int) -> Array:
    """The first n + 1 Bernoulli numbers (n a concrete non-negative integer)."""
    n = operator.index(n)
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    first = jnp.array([1, -1 / 2, 1 / 6])
    if n < 3:
        # Staged as JAX stages indexing a device array (a full slice is no op).
        return first if n == 2 else lax.slice(first, (0,), (n + 1,))
    numbers = at(jnp.zeros(n + 1))[:3].set(first)
    m = jnp.arange(4, n + 1, 2, dtype=numbers.dtype)
    prefix = (1.0 / np.pi**2) * jnp.cumprod(-(m - 1) * m / 4 / np.pi**2)
    k = jnp.arange(2, 50, dtype=numbers.dtype)
    zeta_tail = jnp.sum(k[:, None] ** -m[None, :], axis=0)
    return at(numbers)[4::2].set(prefix * (1 + zeta_tail))
