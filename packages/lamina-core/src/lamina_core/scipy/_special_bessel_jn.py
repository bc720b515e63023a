"""`bessel_jn(z, v=..., n_iter=...)` of `jax.scipy.special`: the Bessel functions of the first
kind J_0 .. J_v at real z, computed as JAX 0.10.2 computes them (Zhang and Jin's BJNDD):
Miller's backward recurrence f_k = 2 (k + 1) f_{k+1} / z - f_{k+2} from f = 1e-16 at order
n_iter down to 0 (a reversed `lax.scan`, the even orders summed by a `lax.cond`), normalized
by J_0 + 2 (J_2 + J_4 + ...) = 1. Scalar in z, vmapped over each of z's axes; the result has
shape (v + 1, *z.shape).
"""

from __future__ import annotations

import operator
from functools import partial
from typing import Any

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.lax import lax_const
from lamina_core.numpy import dtype_of
from lamina_core.numpy import promotion as p
from lamina_core.transforms import Jitted, vmap

Array = Any
Carry = tuple[Array, Array, Array, Array]


def _step(carry: Carry, k: Array) -> tuple[Carry, Array]:
    f0, f1, bs, z = carry
    f = 2.0 * (k + 1.0) * f1 / z - f0

    def add_even(u: tuple[Array, Array]) -> Array:
        bs, f = u
        return bs + 2.0 * f

    def keep(u: tuple[Array, Array]) -> Array:
        bs, _ = u
        return bs

    bs = lax.cond(jnp.mod(k, 2) == 0, add_even, keep, operand=(bs, f))
    return (f1, f, bs, z), f


def _bessel_jn_scalar(z: Array, *, v: int, n_iter: int) -> Array:
    f0 = lax_const(z, 0.0)
    f1 = lax_const(z, 1e-16)
    bs = lax_const(z, 0.0)
    orders = lax.iota(dtype_of(z), n_iter + 1)
    (_, _, bs, _), values = lax.scan(_step, (f0, f1, bs, z), orders, reverse=True)
    last = values[0]
    return values[: v + 1] / (bs - last)


def _bessel_jn_of(z: Any, *, v: int, n_iter: int = 50) -> Array:
    (z,) = p.promote_dtypes_inexact(jnp.asarray(z))
    if jnp.issubdtype(dtype_of(z), complex):
        raise ValueError("complex input not supported.")
    v = operator.index(v)
    n_iter = int(n_iter)
    fun: Any = partial(_bessel_jn_scalar, v=v, n_iter=n_iter)
    for _ in range(z.ndim):
        fun = vmap(fun)
    return jnp.moveaxis(fun(z), -1, 0)


_bessel_jn_of.__name__ = _bessel_jn_of.__qualname__ = "bessel_jn"  # the name its jit prints
_bessel_jn = Jitted(_bessel_jn_of, static_argnames=("v", "n_iter"))


def bessel_jn(z: Any, *, v: int, n_iter: int = 50) -> Array:
    """J_0(z), ..., J_v(z) stacked on a new leading axis (Miller's backward recurrence from
    order `n_iter`)."""
    return _bessel_jn(z, v=v, n_iter=n_iter)
