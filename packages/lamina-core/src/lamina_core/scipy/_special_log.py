"""The logarithmic and entropy functions of `jax.scipy.special`: expit, logit, xlogy,
xlog1py, entr, rel_entr, kl_div, boxcox, boxcox1p, and the re-exported logsumexp, softmax
and log_softmax, staged as JAX 0.10.2 stages them.

`logit`, `xlogy` and `xlog1py` are `custom_jvp` functions with JAX's rules, and so is the
private `_xlogx` under `entr` and `rel_entr`: their rules skip the `where` that makes
0 * log(0) = 0, so derivatives at the boundary are JAX's (inf or nan, not 0).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.custom_derivatives import custom_jvp
from lamina_core.ir import dtypes
from lamina_core.nn import log_softmax as _nn_log_softmax
from lamina_core.nn import logsumexp
from lamina_core.nn import softmax as _nn_softmax
from lamina_core.numpy import dtype_of
from lamina_core.numpy import promotion as p

Array = Any
Axis = int | tuple[int, ...] | None


@custom_jvp
def logit(x: Any) -> Array:
    """log(x / (1 - x)), the inverse of `expit`."""
    (x,) = p.promote_args_inexact("logit", x)
    return lax.log(lax.div(x, lax.sub(p.const(x, 1), x)))


logit.defjvps(lambda g, ans, x: lax.div(g, lax.mul(x, lax.sub(p.const(x, 1), x))))


def expit(x: Any) -> Array:
    """1 / (1 + exp(-x)), the logistic sigmoid."""
    (x,) = p.promote_args_inexact("expit", x)
    return lax.logistic(x)


def _reject_complex(name: str, x: Any) -> None:
    if dtypes.issubdtype(dtype_of(x), np.complexfloating):
        raise ValueError(f"{name} does not support complex-valued inputs.")


@custom_jvp
def xlogy(x: Any, y: Any) -> Array:
    """x * log(y), 0 where x == 0 unless y is nan."""
    x, y = p.promote_args_inexact("xlogy", x, y)
    keep = (x != 0.0) | jnp.isnan(y)
    return jnp.where(keep, lax.mul(x, lax.log(y)), jnp.zeros_like(x))


def _as_arrays(values: tuple[Any, ...]) -> list[Any]:
    """Python scalars as NumPy scalars of their dtype. Lamina's custom_jvp hands rules the
    primals as passed where JAX hands arrays; as floats, 0.0 / 0.0 would raise, not give nan."""
    return [np.asarray(v, dtype_of(v)) if isinstance(v, (int, float)) else v for v in values]


def _xlogy_jvp(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> tuple[Array, Array]:
    (x, y), (x_dot, y_dot) = _as_arrays(primals), _as_arrays(tangents)
    out = xlogy(x, y)
    with np.errstate(divide="ignore", invalid="ignore"):
        return out, (x_dot * lax.log(y) + y_dot * x / y).astype(dtype_of(out))


xlogy.defjvp(_xlogy_jvp)


@custom_jvp
def xlog1py(x: Any, y: Any) -> Array:
    """x * log1p(y), 0 where x == 0 unless y is nan."""
    x, y = p.promote_args_inexact("xlog1py", x, y)
    keep = (x != 0.0) | jnp.isnan(y)
    return jnp.where(keep, lax.mul(x, lax.log1p(y)), jnp.zeros_like(x))


def _xlog1py_jvp(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> tuple[Array, Array]:
    (x, y), (x_dot, y_dot) = _as_arrays(primals), _as_arrays(tangents)
    out = xlog1py(x, y)
    with np.errstate(divide="ignore", invalid="ignore"):
        return out, (x_dot * lax.log1p(y) + y_dot * x / (1 + y)).astype(dtype_of(out))


xlog1py.defjvp(_xlog1py_jvp)


@custom_jvp
def _xlogx(x: Any) -> Array:
    return xlogy(x, x)


def _xlogx_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Array, Array]:
    (x,), (x_dot,) = primals, tangents
    return _xlogx(x), x_dot * (lax.log(x) + 1)


_xlogx.defjvp(_xlogx_jvp)


def entr(x: Any) -> Array:
    """-x log(x) for x >= 0 (0 at 0), -inf for x < 0."""
    (x,) = p.promote_args_inexact("entr", x)
    _reject_complex("entr", x)
    negative = lax.lt(x, p.const(x, 0))
    return lax.select(negative, lax.full_like(x, -np.inf), lax.neg(_xlogx(x)))


def rel_entr(p_: Any, q: Any) -> Array:
    """p log(p / q) for p, q > 0; 0 where p == 0 and q >= 0; inf elsewhere."""
    p_, q = p.promote_args_inexact("rel_entr", p_, q)
    _reject_complex("rel_entr", p_)
    zero = p.const(p_, 0.0)
    both_positive = lax.bitwise_and(lax.gt(p_, zero), lax.gt(q, zero))
    p_zero = lax.bitwise_and(lax.eq(p_, zero), lax.ge(q, zero))
    safe_p = jnp.where(both_positive, p_, 1)
    safe_q = jnp.where(both_positive, q, 1)
    log_val = lax.sub(_xlogx(safe_p), xlogy(safe_p, safe_q))
    return jnp.where(both_positive, log_val, jnp.where(p_zero, zero, np.inf))


def kl_div(p_: Any, q: Any) -> Array:
    """rel_entr(p, q) - p + q."""
    p_, q = p.promote_args_inexact("kl_div", p_, q)
    _reject_complex("kl_div", p_)
    return rel_entr(p_, q) - p_ + q


def boxcox(x: Any, lmbda: Any) -> Array:
    """The Box-Cox transform (x**lmbda - 1) / lmbda, log(x) at lmbda == 0."""
    x, lmbda = p.promote_args_inexact("boxcox", x, lmbda)
    is_zero = lmbda == 0
    safe = jnp.where(is_zero, jnp.ones_like(lmbda), lmbda)
    log_x = jnp.log(x)
    return jnp.where(is_zero, log_x, jnp.expm1(safe * log_x) / safe)


def boxcox1p(x: Any, lmbda: Any) -> Array:
    """The Box-Cox transform of 1 + x."""
    x, lmbda = p.promote_args_inexact("boxcox1p", x, lmbda)
    is_zero = lmbda == 0
    safe = jnp.where(is_zero, jnp.ones_like(lmbda), lmbda)
    log1p_x = jnp.log1p(x)
    return jnp.where(is_zero, log1p_x, jnp.expm1(safe * log1p_x) / safe)


def softmax(x: Any, /, *, axis: Axis = None) -> Array:
    """`jax.nn.softmax` over `axis` (all axes by default)."""
    return _nn_softmax(x, axis=axis)


def log_softmax(x: Any, /, *, axis: Axis = None) -> Array:
    """`jax.nn.log_softmax` over `axis` (all axes by default)."""
    return _nn_log_softmax(x, axis=axis)


__all__ = [
    "boxcox",
    "boxcox1p",
    "entr",
    "expit",
    "kl_div",
    "log_softmax",
    "logit",
    "logsumexp",
    "rel_entr",
    "softmax",
    "xlog1py",
    "xlogy",
]
