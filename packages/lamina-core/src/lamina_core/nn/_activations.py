"""Elementwise activation functions of `jax.nn`, staged as JAX 0.10.2 stages them.

Most are `jit`s named after the function, so a traced call prints as a nested `jit` equation
with JAX's name. `relu`, `relu6` and `log1mexp` are `custom_jvp` functions with JAX's rules
(the derivative of relu and relu6 is 0 at the kinks). `sigmoid` is an inline `jit` in JAX, so
only its `logistic` shows. Exact `gelu` lacks the `copy` equation JAX's `jnp.array` stages
(Lamina has no `copy_p` yet).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.custom_derivatives import custom_jvp
from lamina_core.lax import ad_full_like as full_like
from lamina_core.numpy import promotion as p
from lamina_core.transforms import Jitted

Array = Any


@Jitted
def identity(x: Any) -> Array:
    """`x` unchanged (as an array)."""
    p.check_arraylike("identity", x)
    return p.asarray(x)


@custom_jvp
@Jitted
def relu(x: Any) -> Array:
    """max(x, 0); its derivative at 0 is 0."""
    return jnp.maximum(x, 0)


relu.defjvps(lambda g, ans, x: lax.select(x > 0, g, full_like(g, 0)))


@Jitted
def squareplus(x: Any, b: Any = 4) -> Array:
    """(x + sqrt(x**2 + b)) / 2."""
    p.check_arraylike("squareplus", x, b)
    x, b = p.asarray(x), p.asarray(b)
    y = x + jnp.sqrt(jnp.square(x) + b)
    return y / 2


@Jitted
def softplus(x: Any) -> Array:
    """log(1 + exp(x))."""
    return jnp.logaddexp(x, 0)


@Jitted
def sparse_plus(x: Any) -> Array:
    """0 below -1, x above 1, (x + 1)**2 / 4 between."""
    p.check_arraylike("sparse_plus", x)
    x = p.asarray(x)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


@Jitted
def soft_sign(x: Any) -> Array:
    """x / (|x| + 1)."""
    p.check_arraylike("soft_sign", x)
    x = p.asarray(x)
    return x / (jnp.abs(x) + 1)


def sigmoid(x: Any) -> Array:
    """1 / (1 + exp(-x)), as `lax.logistic` (JAX's is an inline `jit`: no equation of its own)."""
    return lax.logistic(x)


@Jitted
def sparse_sigmoid(x: Any) -> Array:
    """clip((x + 1) / 2, 0, 1)."""
    return 0.5 * jnp.clip(x + 1.0, 0.0, 2.0)


@Jitted
def silu(x: Any) -> Array:
    """x * sigmoid(x)."""
    p.check_arraylike("silu", x)
    x = p.asarray(x)
    return x * sigmoid(x)


swish = silu


@Jitted
def mish(x: Any) -> Array:
    """x * tanh(softplus(x))."""
    p.check_arraylike("mish", x)
    x = p.asarray(x)
    return x * jnp.tanh(softplus(x))


@Jitted
def log_sigmoid(x: Any) -> Array:
    """log(sigmoid(x)) = -softplus(-x)."""
    p.check_arraylike("log_sigmoid", x)
    x = p.asarray(x)
    return -softplus(-x)


@Jitted
def elu(x: Any, alpha: Any = 1.0) -> Array:
    """x above 0, alpha * (exp(x) - 1) below; the inner `where` keeps expm1 finite."""
    p.check_arraylike("elu", x)
    x = p.asarray(x)
    return jnp.where(x > 0, x, alpha * jnp.expm1(jnp.where(x > 0, 0.0, x)))


@Jitted
def leaky_relu(x: Any, negative_slope: Any = 1e-2) -> Array:
    """x at or above 0, negative_slope * x below."""
    p.check_arraylike("leaky_relu", x)
    x = p.asarray(x)
    return jnp.where(x >= 0, x, negative_slope * x)


@Jitted
def hard_tanh(x: Any) -> Array:
    """x clipped to [-1, 1]."""
    p.check_arraylike("hard_tanh", x)
    x = p.asarray(x)
    return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


@Jitted
def celu(x: Any, alpha: Any = 1.0) -> Array:
    """max(x, 0) + alpha * expm1(min(x, 0) / alpha)."""
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@Jitted
def selu(x: Any) -> Array:
    """scale * elu(x, alpha) with the self-normalizing constants."""
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def gelu(x: Any, approximate: bool = True) -> Array:
    """Gaussian error linear unit: the tanh approximation, or exact through erfc."""
    (x,) = p.promote_args_inexact("gelu", x)
    dtype = np.dtype(x.dtype)
    if approximate:
        sqrt_2_over_pi = np.sqrt(2 / np.pi).astype(dtype)
        cdf = 0.5 * (1.0 + jnp.tanh(sqrt_2_over_pi * (x + 0.044715 * (x**3))))
        return x * cdf
    sqrt_half = np.sqrt(0.5).astype(dtype)
    return jnp.array(0.5 * x * lax.erfc(-x * sqrt_half), dtype=dtype)


@custom_jvp
@Jitted
def relu6(x: Any) -> Array:
    """min(max(x, 0), 6); its derivative at 0 and 6 is 0."""
    return jnp.minimum(jnp.maximum(x, 0), 6.0)


relu6.defjvps(lambda g, ans, x: lax.select((x > 0) & (x < 6), g, full_like(g, 0)))


@Jitted
def hard_sigmoid(x: Any) -> Array:
    """relu6(x + 3) / 6."""
    return relu6(x + 3.0) / 6.0


@Jitted
def hard_silu(x: Any) -> Array:
    """x * hard_sigmoid(x)."""
    p.check_arraylike("hard_silu", x)
    x = p.asarray(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu
tanh = jnp.tanh


@custom_jvp
@Jitted
def log1mexp(x: Any) -> Array:
    """log(1 - exp(-x)) for x >= 0, by expm1 near 0 and log1p beyond log(2)."""
    p.check_arraylike("log1mexp", x)
    x = p.asarray(x)
    c = jnp.log(2.0)
    return jnp.where(x < c, jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


log1mexp.defjvps(lambda g, ans, x: g / jnp.expm1(x))
