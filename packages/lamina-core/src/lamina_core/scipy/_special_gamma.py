"""The gamma family of `jax.scipy.special`: gammaln, gammasgn, loggamma, gamma, digamma,
betaln, beta, factorial, comb, multigammaln, poch, and the error functions erf, erfc and
erfinv, staged as JAX 0.10.2 stages them on real inputs.

The complex branches of `loggamma` and `gamma` (a Lanczos approximation in JAX) are not here:
complex inputs raise. `betaln` follows JAX's split at b = 8: plain log-gammas below, the
`algdiv` asymptotic series (from the TOMS 708 BRATIO code) above, where the difference of two
large log-gammas would cancel.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.custom_derivatives import custom_jvp
from lamina_core.ir import dtypes
from lamina_core.numpy import dtype_of, select, shape_of
from lamina_core.numpy import promotion as p
from lamina_core.transforms import Jitted

Array = Any


def _reject_complex(name: str, x: Any, message: str | None = None) -> None:
    if dtypes.issubdtype(dtype_of(x), np.complexfloating):
        raise ValueError(message or f"{name} does not support complex-valued inputs.")


def gammaln(x: Any) -> Array:
    """log|Gamma(x)|."""
    (x,) = p.promote_args_inexact("gammaln", x)
    return lax.lgamma(x)


@Jitted
def gammasgn(x: Any) -> Array:
    """The sign of Gamma(x): nan at the poles and at nan, the sign of zero at +-0."""
    (x,) = p.promote_args_inexact("gammasgn", x)
    _reject_complex("gammasgn", x)
    scalar = dtype_of(x).type
    floor_x = lax.floor(x)
    negative = x < 0
    at_pole = (negative & (x == floor_x)) | jnp.isnan(x)
    below_zero = (negative & (floor_x % 2 != 0)) | ((x == 0) & jnp.signbit(x))
    return select([at_pole, below_zero], [scalar(np.nan), scalar(-1.0)], scalar(1.0))


def loggamma(x: Any) -> Array:
    """The principal branch of log(Gamma(x)): lgamma for x > 0, nan elsewhere (real x only)."""
    (x,) = p.promote_args_inexact("loggamma", x)
    if dtypes.issubdtype(dtype_of(x), np.complexfloating):
        raise NotImplementedError("lamina.scipy.special.loggamma: complex inputs")
    res = lax.lgamma(x)
    return jnp.where(x > 0, res, np.nan)


def gamma(x: Any) -> Array:
    """Gamma(x) = gammasgn(x) * exp(lgamma(x)) (real x only)."""
    (x,) = p.promote_args_inexact("gamma", x)
    if dtypes.issubdtype(dtype_of(x), np.complexfloating):
        raise NotImplementedError("lamina.scipy.special.gamma: complex inputs")
    return gammasgn(x) * lax.exp(lax.lgamma(x))


def digamma(x: Any) -> Array:
    """psi(x), the derivative of log Gamma."""
    (x,) = p.promote_args_inexact("digamma", x)
    return lax.digamma(x)


def _algdiv(a: Any, b: Any) -> Array:
    """log Gamma(b) - log Gamma(a + b) for b >= 8, by an asymptotic series in 1/b."""
    coeffs = (
        0.0833333333333333,
        -0.00277777777760991,
        0.00079365066682539,
        -0.00059520293135187,
        0.000837308034031215,
        -0.00165322962780713,
    )
    ratio = a / b
    c = ratio / (1 + ratio)
    x = ratio / (1 + ratio)
    d = b + (a - 0.5)
    x2 = x * x
    s3 = 1.0 + (x + x2)
    s5 = 1.0 + (x + x2 * s3)
    s7 = 1.0 + (x + x2 * s5)
    s9 = 1.0 + (x + x2 * s7)
    s11 = 1.0 + (x + x2 * s9)
    t = (1.0 / b) ** 2
    w = coeffs[5] * s11 * t + coeffs[4] * s9
    w = (((w * t + coeffs[3] * s7) * t + coeffs[2] * s5) * t + coeffs[1] * s3) * t + coeffs[0]
    w = w * (c / b)
    u = d * lax.log1p(a / b)
    v = a * (lax.log(b) - 1.0)
    return jnp.where(u <= v, w - v - u, w - u - v)


def betaln(a: Any, b: Any) -> Array:
    """log|B(a, b)|."""
    a, b = p.promote_args_inexact("betaln", a, b)
    a, b = jnp.minimum(a, b), jnp.maximum(a, b)
    small_b = lax.lgamma(a) + (lax.lgamma(b) - lax.lgamma(a + b))
    large_b = lax.lgamma(a) + _algdiv(a, b)
    return jnp.where(b < 8, small_b, large_b)


def beta(a: Any, b: Any) -> Array:
    """B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b), signed."""
    a, b = p.promote_args_inexact("beta", a, b)
    _reject_complex("beta", a)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * lax.exp(betaln(a, b))


def factorial(n: Any, exact: bool = False) -> Array:
    """n! as exp(lgamma(n + 1)), 0 for negative n; `exact=True` is not supported."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    (n,) = p.promote_args_inexact("factorial", n)
    return jnp.where(n < 0, 0, lax.exp(lax.lgamma(n + 1)))


def comb(N: Any, k: Any, *, repetition: bool = False) -> Array:
    """N choose k (with repetition: N + k - 1 choose k), as floats; 0 outside 0 <= k <= N."""
    N, k = p.promote_args_inexact("comb", N, k)
    if repetition:
        trivial = (k == 0) & (N >= 0)
        return jnp.where(trivial, 1.0, comb(N + k - 1, k, repetition=False))
    valid = (k <= N) & (N >= 0) & (k >= 0)
    safe_n = jnp.where(valid, N, 0.0)
    safe_k = jnp.where(valid, k, 0.0)
    log_comb = gammaln(safe_n + 1) - gammaln(safe_k + 1) - gammaln(safe_n + 1 - safe_k)
    return jnp.where(valid, lax.exp(log_comb), 0.0)


def multigammaln(a: Any, d: Any) -> Array:
    """The log of the multivariate gamma function of dimension `d` (a Python int)."""
    d = operator.index(d)
    a, d_arr = p.promote_args_inexact("multigammaln", a, d)
    const = p.const
    d_choose_2_halved = lax.mul(lax.mul(const(a, 0.25), d_arr), lax.sub(d_arr, const(a, 1)))
    constant = lax.mul(d_choose_2_halved, lax.log(const(a, np.pi)))
    offsets = lax.div(jnp.arange(d, dtype=dtype_of(d_arr)), const(a, 2))
    ndim = len(shape_of(a))
    terms = gammaln(jnp.expand_dims(a, axis=-1) - jnp.expand_dims(offsets, axis=tuple(range(ndim))))
    return jnp.sum(terms, axis=-1) + constant


@custom_jvp
def poch(z: Any, m: Any) -> Array:
    """The rising factorial Gamma(z + m) / Gamma(z); 1 where m == 0."""
    z, m = p.promote_args_inexact("poch", z, m)
    _reject_complex("poch", z, "jnp.poch does not support complex-valued inputs.")
    return jnp.where(m == 0.0, jnp.array(1, dtype=dtype_of(z)), gamma(z + m) / gamma(z))


def _poch_dz(z: Any, m: Any) -> Array:
    return (digamma(z + m) - digamma(z)) * poch(z, m)


def _poch_dm(z: Any, m: Any) -> Array:
    return digamma(z + m) * poch(z, m)


poch.defjvps(
    lambda z_dot, ans, z, m: _poch_dz(z, m) * z_dot,
    lambda m_dot, ans, z, m: _poch_dm(z, m) * m_dot,
)


def erf(x: Any) -> Array:
    """The error function (real x)."""
    (x,) = p.promote_args_inexact("erf", x)
    return lax.erf(x)


def erfc(x: Any) -> Array:
    """1 - erf(x), computed directly (real x)."""
    (x,) = p.promote_args_inexact("erfc", x)
    return lax.erfc(x)


def erfinv(x: Any) -> Array:
    """The inverse of erf on (-1, 1) (real x)."""
    (x,) = p.promote_args_inexact("erfinv", x)
    return lax.erf_inv(x)
