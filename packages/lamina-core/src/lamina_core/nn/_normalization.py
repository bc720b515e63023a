"""The reductions of `jax.nn`: softmax, log_softmax, logsumexp, logmeanexp, standardize, glu,
one_hot, staged as JAX 0.10.2 stages them.

`softmax` stops the gradient through its shift, as JAX's default; `softmax_custom_jvp` is the
form JAX takes with `jax_softmax_custom_jvp` on, a `custom_jvp` (the axis not differentiated)
whose rule is y * (dx - sum(y * dx)), its call named `_softmax` as JAX's. `log_softmax` is a
`jit` that stops the gradient through the shift. `logsumexp` is
`jax.scipy.special.logsumexp`, not a `jit`.
"""

from __future__ import annotations

import operator
import warnings
from functools import partial
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.custom_derivatives import custom_jvp
from lamina_core.ir import dtypes
from lamina_core.lax import ad_full_like as full_like
from lamina_core.nn._activations import sigmoid
from lamina_core.numpy import (
    _count,
    _one_hot,
    _reduction_dims,
    dtype_of,
    shape_of,
)
from lamina_core.numpy import promotion as p
from lamina_core.transforms import Jitted

Array = Any
Axis = int | tuple[int, ...] | None


def logsumexp(
    a: Any,
    axis: Axis = None,
    b: Any = None,
    keepdims: bool = False,
    return_sign: bool = False,
    where: Any = None,
) -> Any:
    """log(sum(b * exp(a))) over `axis`, shifted by the (gradient-stopped) finite maximum."""
    if where is not None:
        a = jnp.where(where, a, 0)
    if b is not None:
        a_arr, b_arr = p.promote_args_inexact("logsumexp", a, b)
        a_arr = jnp.where(b_arr != 0, a_arr, -np.inf)
    else:
        (a_arr,) = p.promote_args_inexact("logsumexp", a)
        b_arr = a_arr
    dims = _reduction_dims(len(shape_of(a_arr)), axis)
    amax = jnp.max(jnp.real(a_arr), axis=dims, keepdims=keepdims, where=where, initial=-np.inf)
    amax = lax.stop_gradient(lax.select(jnp.isfinite(amax), amax, full_like(amax, 0)))
    amax_with_dims = amax if keepdims else lax.expand_dims(amax, dims)
    exp_a = lax.exp(lax.sub(a_arr, amax_with_dims.astype(dtype_of(a_arr))))
    if b is not None:
        exp_a = lax.mul(exp_a, b_arr)
    sumexp = exp_a.sum(axis=dims, keepdims=keepdims, where=where)
    sign = lax.sign(sumexp)
    complex_out = dtypes.issubdtype(dtype_of(a_arr), np.complexfloating)
    if return_sign or not complex_out:
        sumexp = abs(sumexp)
    out = lax.add(lax.log(sumexp), amax.astype(dtype_of(sumexp)))
    if return_sign:
        return (out, sign)
    if b is not None and not dtypes.issubdtype(dtype_of(out), np.complexfloating):
        out = jnp.where(sign < 0, jnp.array(np.nan, dtype=dtype_of(out)), out)
    return out


@partial(Jitted, static_argnames=("axis", "keepdims"))
def logmeanexp(x: Any, axis: Axis = None, where: Any = None, keepdims: bool = False) -> Array:
    """log(mean(exp(x))) over `axis`: logsumexp less the log of the count."""
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    dims = _reduction_dims(len(shape_of(x)), axis)
    count = _count(p.asarray(x), dims, keepdims, where, dtype_of(lse))
    return lse - jnp.log(count)


@partial(Jitted, static_argnames=("axis",))
def log_softmax(x: Any, axis: Axis = -1, where: Any = None) -> Array:
    """x - logsumexp(x) over `axis`; -inf where `where` is False."""
    p.check_arraylike("log_softmax", x)
    x_arr = p.asarray(x)
    x_max = jnp.max(x_arr, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x_arr if where is None else jnp.where(where, x_arr, -np.inf)
    shifted = x_safe - lax.stop_gradient(x_max)
    shifted_logsumexp = jnp.log(jnp.sum(jnp.exp(shifted), axis, where=where, keepdims=True))
    result = shifted - shifted_logsumexp
    if where is not None:
        return jnp.where(where, result, -np.inf)
    return result


def softmax(x: Any, axis: Axis = -1, where: Any = None) -> Array:
    """exp(x) / sum(exp(x)) over `axis`; 0 where `where` is False.

    JAX 0.10.2's default (`jax_softmax_custom_jvp` off) stops the gradient through the shifted
    maximum; `softmax_custom_jvp` is the other setting's `custom_jvp` form.
    """
    x_max = jnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, -np.inf)
    unnormalized = jnp.exp(x_safe - lax.stop_gradient(x_max))
    result = unnormalized / jnp.sum(unnormalized, axis, where=where, keepdims=True)
    if where is not None:
        result = jnp.where(where, result, 0)
    return result


def softmax_custom_jvp(x: Any, axis: Axis = -1, where: Any = None) -> Array:
    """`softmax` as JAX stages it with `jax_softmax_custom_jvp` on: a `custom_jvp` call."""
    return _softmax(x, axis, where)


@partial(custom_jvp, nondiff_argnums=(1,))
def _softmax(x: Any, axis: Axis = -1, where: Any = None, initial: Any = -np.inf) -> Array:
    x_max = jnp.max(x, axis, where=where, initial=initial, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, initial)
    unnormalized = jnp.exp(x_safe - x_max)
    result = unnormalized / jnp.sum(unnormalized, axis, where=where, keepdims=True)
    if where is not None:
        result = jnp.where(where, result, 0)
    return result


def _softmax_jvp(axis: Axis, primals: Any, tangents: Any) -> tuple[Array, Array]:
    (x, where, initial), (x_dot, _, _) = primals, tangents
    y = _softmax(x, axis, where, initial)
    return y, y * (x_dot - (y * x_dot).sum(axis, where=where, keepdims=True))


_softmax.defjvp(_softmax_jvp)


@partial(Jitted, static_argnames=("axis", "algorithm"))
def standardize(
    x: Any,
    axis: Axis = -1,
    mean: Any = None,
    variance: Any = None,
    epsilon: Any = 1e-5,
    where: Any = None,
    *,
    algorithm: str = "fast",
) -> Array:
    """(x - mean) / sqrt(variance + epsilon), the moments over `axis` unless given."""
    p.check_arraylike("standardize", x)
    for arg in (mean, variance, where):
        if arg is not None:
            p.check_arraylike("standardize", arg)
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = jnp.mean(jnp.square(jnp.subtract(x, mean)), axis, keepdims=True, where=where)
        elif algorithm == "fast":
            variance = jnp.mean(jnp.square(x), axis, keepdims=True, where=where) - jnp.square(mean)
            variance = jnp.clip(variance, 0)
        else:
            raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    return jnp.subtract(x, mean) * lax.rsqrt(variance + epsilon)


@partial(Jitted, static_argnames=("axis",))
def glu(x: Any, axis: int = -1) -> Array:
    """The first half of `x` along `axis` gated by the sigmoid of the second."""
    p.check_arraylike("glu", x)
    x_arr = p.asarray(x)
    size = shape_of(x_arr)[axis]
    assert size % 2 == 0, "axis size must be divisible by 2"
    x1, x2 = jnp.split(x_arr, 2, axis)
    return x1 * sigmoid(x2)


def one_hot(x: Any, num_classes: int, *, dtype: Any = None, axis: int = -1) -> Array:
    """`x`'s integers as one-hot vectors of length `num_classes` along `axis`."""
    num_classes = operator.index(num_classes)
    x_arr = jnp.asarray(x)
    if not dtypes.issubdtype(dtype_of(x_arr), np.integer):
        warnings.warn(
            f"jax.nn.one_hot input should be integer-typed; got dtype={dtype_of(x_arr)}",
            DeprecationWarning,
            stacklevel=2,
        )
    dtype = dtypes.canonicalize_dtype(np.float64) if dtype is None else dtype
    return _one_hot(x_arr, num_classes, dtype=dtype, axis=axis)
