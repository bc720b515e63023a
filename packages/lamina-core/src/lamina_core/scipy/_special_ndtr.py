"""The normal distribution functions of `jax.scipy.special` (ndtr, ndtri, log_ndtr) and
Spence's dilogarithm, staged as JAX 0.10.2 stages them; float32 and float64 only.

`ndtri` is Cephes' rational approximation in three ranges of p; `log_ndtr` takes log(ndtr)
in the middle, -ndtr(-x) (log(1 - e) ~ -e) in the upper tail and an asymptotic series below,
and is a `custom_jvp` whose rule is exp(log pdf - log cdf), stable far into the lower tail.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.custom_derivatives import custom_jvp
from lamina_core.numpy import dtype_of, shape_of
from lamina_core.numpy import promotion as p

Array = Any

_SUPPORTED = (np.dtype(np.float32), np.dtype(np.float64))


def _check_float(x: Any, message: str) -> None:
    dtype = dtype_of(x)
    if dtype not in _SUPPORTED:
        raise TypeError(message.format(dtype))


def ndtr(x: Any) -> Array:
    """The standard normal CDF, by erf near 0 and erfc in the tails."""
    x = jnp.asarray(x)
    _check_float(x, "x.dtype={} is not supported, see docstring for supported types.")
    return _ndtr(x)


def _ndtr(x: Any) -> Array:
    scalar = dtype_of(x).type
    half_sqrt_2 = scalar(0.5) * np.sqrt(2.0, dtype=scalar)
    w = x * half_sqrt_2
    z = lax.abs(w)
    near_zero = lax.lt(z, half_sqrt_2)
    central = scalar(1.0) + lax.erf(w)
    tail = lax.select(lax.gt(w, scalar(0.0)), scalar(2.0) - lax.erfc(z), lax.erfc(z))
    y = lax.select(near_zero, central, tail)
    return scalar(0.5) * y


# Cephes ndtri: numerator/denominator coefficients for |p - 1/2| <= 1/2 - exp(-2) ...
_NDTRI_P0 = (-59.96335010141079, 98.00107541859997, -56.67628574690703, 13.931260938727968,
             -1.2391658386738125)  # fmt: skip
_NDTRI_Q0 = (1.0, 1.9544885833814176, 4.676279128988815, 86.36024213908905,
             -225.46268785411937, 200.26021238006066, -82.03722561683334, 15.90562251262117,
             -1.1833162112133)  # fmt: skip
# ... for the tail with z = sqrt(-2 log p) < 8 ...
_NDTRI_P1 = (4.0554489230596245, 31.525109459989388, 57.16281922464213, 44.08050738932008,
             14.684956192885803, 2.1866330685079025, -0.1402560791713545,
             -0.03504246268278482, -0.0008574567851546854)  # fmt: skip
_NDTRI_Q1 = (1.0, 15.779988325646675, 45.39076351288792, 41.3172038254672, 15.04253856929075,
             2.504649462083094, -0.14218292285478779, -0.03808064076915783,
             -0.0009332594808954574)  # fmt: skip
# ... and for z >= 8.
_NDTRI_P2 = (3.2377489177694603, 6.915228890689842, 3.9388102529247444, 1.3330346081580755,
             0.20148538954917908, 0.012371663481782003, 0.00030158155350823543,
             2.6580697468673755e-06, 6.239745391849833e-09)  # fmt: skip
_NDTRI_Q2 = (1.0, 6.02427039364742, 3.6798356385616087, 1.3770209948908132,
             0.21623699359449663, 0.013420400608854318, 0.00032801446468212774,
             2.8924786474538068e-06, 6.790194080099813e-09)  # fmt: skip


def ndtri(p_: Any) -> Array:
    """The inverse of `ndtr`: -inf at 0, inf at 1."""
    _check_float(p_, "x.dtype={} is not supported, see docstring for supported types.")
    return _ndtri(p_)


def _poly(coeffs: tuple[float, ...], x: Any, scalar: type) -> Array:
    return jnp.polyval(np.array(coeffs, scalar), x)


def _ndtri(p_: Any) -> Array:
    scalar = dtype_of(p_).type
    shape = shape_of(p_)
    # Work with the smaller of p and 1 - p; the sign is restored at the end.
    maybe_complement = jnp.where(p_ > scalar(-np.expm1(-2.0)), scalar(1.0) - p_, p_)
    safe = jnp.where(
        maybe_complement == scalar(0.0), jnp.full(shape, scalar(0.5)), maybe_complement
    )
    w = safe - scalar(0.5)
    ww = lax.square(w)
    central = w + w * ww * (_poly(_NDTRI_P0, ww, scalar) / _poly(_NDTRI_Q0, ww, scalar))
    central *= -scalar(np.sqrt(2.0 * np.pi))
    z = lax.sqrt(scalar(-2.0) * lax.log(safe))
    leading = z - lax.log(z) / z
    far_term = _poly(_NDTRI_P2, 1 / z, scalar) / _poly(_NDTRI_Q2, 1 / z, scalar) / z
    near_term = _poly(_NDTRI_P1, 1 / z, scalar) / _poly(_NDTRI_Q1, 1 / z, scalar) / z
    far_tail = leading - far_term
    near_tail = leading - near_term
    x = jnp.where(
        safe > scalar(np.exp(-2.0)), central, jnp.where(z >= scalar(8.0), far_tail, near_tail)
    )
    x = jnp.where(p_ > scalar(1.0 - np.exp(-2.0)), x, -x)
    infinity = jnp.full(shape, scalar(np.inf))
    return jnp.where(p_ == scalar(0.0), -infinity, jnp.where(p_ == scalar(1.0), infinity, x))


# Below LOWER log(ndtr) loses precision and the asymptotic series takes over; above UPPER
# ndtr rounds to 1 and log(ndtr(x)) ~ -ndtr(-x).
_LOG_NDTR_BOUNDS = {
    np.dtype(np.float64): (np.array(-20, np.float64), np.array(8, np.float64)),
    np.dtype(np.float32): (np.array(-10, np.float32), np.array(5, np.float32)),
}
_LOG_SQRT_2PI = np.log(np.sqrt(2 * np.pi))


@partial(custom_jvp, nondiff_argnums=(1,))
def log_ndtr(x: Any, series_order: int = 3) -> Array:
    """log(ndtr(x)), accurate in both tails; `series_order` terms of the lower-tail series."""
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    x_arr = jnp.asarray(x)
    dtype = dtype_of(x_arr)
    if dtype not in _LOG_NDTR_BOUNDS:
        raise TypeError(f"x.dtype={dtype} is not supported.")
    lower, upper = _LOG_NDTR_BOUNDS[dtype]
    above = lax.gt(x_arr, upper)
    ndtr_res = _ndtr(jnp.where(above, -x_arr, lax.max(x_arr, lower)))
    upper_tail = -ndtr_res
    in_middle = lax.gt(x_arr, lower)
    middle = lax.log(ndtr_res)
    lower_tail = _log_ndtr_lower(lax.min(x_arr, lower), series_order)
    return jnp.where(above, upper_tail, jnp.where(in_middle, middle, lower_tail))


def _log_ndtr_jvp(series_order: int, primals: Any, tangents: Any) -> tuple[Array, Array]:
    (x,), (t,) = primals, tangents
    ans = log_ndtr(x, series_order=series_order)
    return ans, lax.mul(t, lax.exp(lax.sub(_norm_logpdf(x), ans)))


log_ndtr.defjvp(_log_ndtr_jvp)


def _log_ndtr_lower(x: Any, series_order: int) -> Array:
    scalar = dtype_of(x).type
    log_scale = -scalar(0.5) * lax.square(x) - lax.log(-x) - scalar(0.5 * np.log(2.0 * np.pi))
    return log_scale + lax.log(_log_ndtr_series(x, series_order))


def _log_ndtr_series(x: Any, series_order: int) -> Array:
    """1 + sum_n (-1)^n (2n - 1)!! / x^(2n), the even and odd terms summed apart."""
    scalar = dtype_of(x).type
    if series_order <= 0:
        return np.array(1, scalar)
    x_2 = lax.square(x)
    even_sum = jnp.zeros_like(x)
    odd_sum = jnp.zeros_like(x)
    x_2n = x_2
    for n in range(1, series_order + 1):
        term = np.array(np.prod(np.arange(2 * n - 1, 1, -2)), scalar) / x_2n
        if n % 2:
            odd_sum = odd_sum + term
        else:
            even_sum = even_sum + term
        x_2n = x_2n * x_2
    return scalar(1.0) + even_sum - odd_sum


def _norm_logpdf(x: Any) -> Array:
    return lax.sub(lax.mul(p.const(x, -0.5), lax.square(x)), p.const(x, _LOG_SQRT_2PI))


_SPENCE_A = (4.6512858607399003e-05, 0.007315890452380947, 0.13384763957830903,
             0.8796913117545303, 2.7114985119655346, 4.256971560081218, 3.297713409852251,
             1.0)  # fmt: skip
_SPENCE_B = (0.0006909904889125533, 0.02540437639325444, 0.2829748606025681,
             1.4117259775183106, 3.6380053334513707, 5.03278880143317, 3.547713409852251,
             1.0)  # fmt: skip


def spence(x: Any) -> Array:
    """Spence's function, the integral from 1 to x of log(t) / (1 - t); nan for x < 0."""
    x = jnp.asarray(x)
    _check_float(x, "x.dtype={} is not supported, see docstring for supported types.")
    return jnp.piecewise(x, [x < 0.0, x == 1.0, x == 0.0], [np.nan, 0, np.pi**2 / 6, _spence_calc])


def _spence_poly(w: Any) -> Array:
    num = jnp.array(_SPENCE_A, dtype=dtype_of(w))
    den = jnp.array(_SPENCE_B, dtype=dtype_of(w))
    return -w * jnp.polyval(num, w) / jnp.polyval(den, w)


def _spence_calc(x: Any) -> Array:
    # Reflections bring x into [1/2, 3/2] (w = x - 1 near 0) before the rational fit.
    inverted = x > 2.0
    x = jnp.piecewise(x, [inverted], [lambda v: 1.0 / v, lambda v: v])
    above = x > 1.5
    below = x < 0.5
    inverted = inverted | above
    w = jnp.piecewise(x, [above, below], [lambda v: 1.0 / v - 1.0, lambda v: -v, lambda v: v - 1.0])
    y = _spence_poly(w)
    y = jnp.where(below, np.pi**2 / 6.0 - jnp.log(x) * jnp.log(1.0 - x) - y, y)
    return jnp.where(inverted, -0.5 * jnp.log(x) ** 2 - y, y)
