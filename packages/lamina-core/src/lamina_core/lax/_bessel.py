"""The exponentially scaled modified Bessel functions of the first kind, orders 0 and 1:
`bessel_i0e(x) = exp(-|x|) I0(x)` and `bessel_i1e(x) = exp(-|x|) I1(x)`, on floats.

The NumPy references sum the power series in float64 up to |x| = 30 and Hankel's asymptotic
expansion beyond. XLA has `chlo.bessel_i1e`; `bessel_i0e` is lowered, as in JAX, as Cephes'
Chebyshev expansions (`i0e_expansion`, written with `lax` ops and traced by the lowering).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from lamina_core.lax import _nary as n
from lamina_core.lax._ad_common import full_like
from lamina_core.lax._elementwise import abs as abs_
from lamina_core.lax._elementwise import add, div, le, mul, sub
from lamina_core.lax._selection import select
from lamina_core.lax._structural import _convert_element_type, convert_element_type
from lamina_core.lax._transcendental import sqrt
from lamina_core.lax._types import Array
from lamina_core.trace import typeof

_SERIES_LIMIT: Final = 30.0
"""Below it the power series converges in float64 (its terms stay under e**30); above it the
asymptotic series is accurate to rounding after a few dozen terms."""


def _power_series(ax: np.ndarray, order: int) -> np.ndarray:
    """I_order(ax) (order 0 or 1) for 0 <= ax <= `_SERIES_LIMIT`, summed until terms vanish."""
    quarter_sq = ax * ax / 4
    term = np.ones_like(ax) if order == 0 else ax / 2
    total = term.copy()
    k = 0
    while np.any(term > 1e-17 * total):
        k += 1
        term = term * quarter_sq / (k * (k + order))
        total += term
    return total


def _asymptotic_scaled(ax: np.ndarray, order: int) -> np.ndarray:
    """exp(-ax) I_order(ax) for large ax: Hankel's series in 1/ax, cut at its smallest term."""
    mu = 4.0 * order * order
    term = np.ones_like(ax)
    total = term.copy()
    for k in range(1, 60):
        term = -term * (mu - (2 * k - 1) ** 2) / (8 * k * ax)
        total += term
    return total / np.sqrt(2 * np.pi * ax)


def _scaled_bessel(x: np.ndarray, order: int) -> np.ndarray:
    x = np.asarray(x, np.float64)
    ax = np.abs(x)
    small = ax <= _SERIES_LIMIT
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        near = _power_series(np.where(small, ax, 0.0), order) * np.exp(-np.where(small, ax, 0.0))
        far = _asymptotic_scaled(np.where(small, _SERIES_LIMIT * 2, ax), order)
    out = np.where(small, near, far)
    out = np.where(np.isinf(ax), 0.0, out)
    out = np.where(np.isnan(x), np.nan, out)
    # I1 is odd, I0 even.
    return np.copysign(out, x) if order == 1 else out


def _i0e_reference(x: np.ndarray) -> np.ndarray:
    return _scaled_bessel(x, 0)


def _i1e_reference(x: np.ndarray) -> np.ndarray:
    return _scaled_bessel(x, 1)


bessel_i0e_p: Final = n.unary("bessel_i0e", n.FLOAT, n.in_float32(_i0e_reference))
bessel_i1e_p: Final = n.unary("bessel_i1e", n.FLOAT, n.in_float32(_i1e_reference))


def bessel_i0e(x: Array) -> Array:
    """The exponentially scaled modified Bessel function of order 0: `exp(-|x|) I0(x)`."""
    return bessel_i0e_p.bind(x)


def bessel_i1e(x: Array) -> Array:
    """The exponentially scaled modified Bessel function of order 1: `exp(-|x|) I1(x)`."""
    return bessel_i1e_p.bind(x)


# Cephes' Chebyshev coefficients for i0e, on [0, 8] in x/2 - 2 and on (8, inf) in 32/x - 2.
# The float32 expansions keep the trailing (largest) terms of the float64 ones.
_I0E_NEAR_64: Final = (
    -4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
    1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
    -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
    9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-9,
    -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
    1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
    -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
    1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
    -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
    1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1,
)  # fmt: skip
_I0E_FAR_64: Final = (
    -7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
    3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
    1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
    -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
    7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
    -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
    3.39623202570838634515e-9, 2.26666899049817806459e-8, 2.04891858946906374183e-7,
    2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
    8.04490411014108831608e-1,
)  # fmt: skip
_I0E_NEAR_32: Final = _I0E_NEAR_64[-18:]
_I0E_FAR_32: Final = _I0E_FAR_64[-7:]


def _weak(value: float, like: Any) -> Any:
    """`value` as a weakly typed scalar of `like`'s dtype (a Python scalar in JAX's code)."""
    return _convert_element_type(value, typeof(like).dtype, True)  # type: ignore[attr-defined]


def _chebyshev(t: Any, coefficients: Sequence[float]) -> Any:
    """Clenshaw's recurrence for the Chebyshev series with `coefficients` (highest first)."""
    b0 = full_like(t, 0)
    b1 = full_like(t, 0)
    b2 = full_like(t, 0)
    for coefficient in coefficients:
        b2, b1 = b1, b0
        b0 = add(sub(mul(t, b1), b2), full_like(t, coefficient))
    return mul(_weak(0.5, t), sub(b0, b2))


def _i0e_expansion_of(x: Any, near: Sequence[float], far: Sequence[float]) -> Any:
    ax = abs_(x)
    half, two, thirty_two = full_like(ax, 0.5), full_like(ax, 2.0), full_like(ax, 32.0)
    on_near = _chebyshev(sub(mul(half, ax), two), near)
    on_far = div(_chebyshev(sub(div(thirty_two, ax), two), far), sqrt(ax))
    return select(le(ax, _weak(8.0, ax)), on_near, on_far)


def i0e_expansion(x: Array) -> Array:
    """`bessel_i0e` as JAX computes it on XLA: Cephes' expansions for float64 and float32,
    16-bit floats through float32."""
    dtype = np.dtype(typeof(x).dtype)  # type: ignore[attr-defined]  # arrays have dtypes
    if dtype == np.float64:
        return _i0e_expansion_of(x, _I0E_NEAR_64, _I0E_FAR_64)
    if dtype == np.float32:
        return _i0e_expansion_of(x, _I0E_NEAR_32, _I0E_FAR_32)
    wide = convert_element_type(x, np.float32)
    return convert_element_type(_i0e_expansion_of(wide, _I0E_NEAR_32, _I0E_FAR_32), dtype)


__all__ = [
    "bessel_i0e",
    "bessel_i0e_p",
    "bessel_i1e",
    "bessel_i1e_p",
]
