"""The Hurwitz zeta function `zeta(x, q) = sum over n >= 0 of (q + n)**-x` and the polygamma
function `polygamma(m, x)`, the m-th derivative of digamma, as binary primitives on floats.

The NumPy references compute in float64. Zeta sums the first terms directly and the rest with
the Euler-Maclaurin formula; polygamma is `(-1)**(m+1) m! zeta(m+1, x)` for positive integer
m and digamma for m = 0. Both give XLA's (`chlo.zeta`, `chlo.polygamma`) answers off the
domain: zeta is nan for x < 1 and +inf at x = 1 (even for a nan q), nan for infinite x or q;
for q <= 0 it is defined only for integer x, and at the poles (integer q <= 0, -inf among
them) it is +inf for even x (even x <= 0) and nan otherwise; polygamma is nan unless m is a
non-negative integer.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from lamina_core.lax import _nary as n
from lamina_core.lax import _special_refs as refs
from lamina_core.lax._types import Array

_BERNOULLI_OVER_FACTORIAL: Final = tuple(
    b / f
    for b, f in zip(
        (
            1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
            43867 / 798, -174611 / 330, 854513 / 138, -236364091 / 2730,
        ),
        (
            2.0, 24.0, 720.0, 40320.0, 3628800.0, 479001600.0, 87178291200.0,
            20922789888000.0, 6402373705728000.0, 2.43290200817664e18, 1.1240007277776077e21,
            6.204484017332394e23,
        ),
        strict=True,
    )
)  # fmt: skip
"""B_2k / (2k)! for k = 1..12: the Euler-Maclaurin correction coefficients."""

_MIN_SHIFT: Final = 20.0
"""The tail starts at q + N >= x + 20 (and >= 40): each correction term is then at least
(2 pi)**2 times smaller than the one before, so twelve reach float64's rounding."""

_MAX_TERMS: Final = 2000
"""A cap on the direct terms: beyond it (x in the thousands) every remaining term underflows."""


def _direct_terms(x: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sum over n < N of (q + n)**-x, and q + N, with N per element (see `_MIN_SHIFT`)."""
    target = np.maximum(x, _MIN_SHIFT) + _MIN_SHIFT
    count = np.clip(np.ceil(target - q), 0, _MAX_TERMS)
    total = np.zeros_like(x)
    for k in range(int(count.max(initial=0))):
        total += np.where(k < count, np.power(q + k, -x), 0.0)
    return total, q + count


def _euler_maclaurin_tail(x: np.ndarray, a: np.ndarray) -> np.ndarray:
    """sum over n >= 0 of (a + n)**-x for a large against x."""
    first = np.power(a, -x)
    total: np.ndarray = np.power(a, 1 - x) / (x - 1) + first / 2
    # rising = x (x+1) ... (x+2k-2) / a**(2k-1), grown two factors per term.
    rising = x / a
    for k, coefficient in enumerate(_BERNOULLI_OVER_FACTORIAL):
        total += coefficient * rising * first
        rising = rising * (x + 2 * k + 1) * (x + 2 * k + 2) / (a * a)
    return total


def _zeta_reference(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    x, q = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(q, np.float64))
    integer_x = x == np.floor(x)
    inside = (x > 1) & np.isfinite(x) & np.isfinite(q) & ((q > 0) | integer_x)
    # Operands off the domain are computed at (2, 1) and replaced below.
    xs, qs = np.where(inside, x, 2.0), np.where(inside, q, 1.0)
    with np.errstate(all="ignore"):
        head, shifted = _direct_terms(xs, qs)
        tail = _euler_maclaurin_tail(xs, shifted)
    # A tail that underflows for huge x can meet an overflowing factor: it is zero then.
    out = np.where(inside, head + np.where(np.isfinite(tail), tail, 0.0), np.nan)
    # The special cases override each other in XLA's order: the poles whatever x is (but 1).
    out = np.where(x < 1, np.nan, out)
    out = np.where((q <= 0) & ~integer_x, np.nan, out)
    even_x = integer_x & (np.fmod(x, 2) == 0)
    at_pole = (q <= 0) & (q == np.floor(q))
    out = np.where(at_pole, np.where(even_x, np.inf, np.nan), out)
    out = np.where(x == 1, np.inf, out)
    return out


def _polygamma_reference(m: np.ndarray, x: np.ndarray) -> np.ndarray:
    m, x = np.broadcast_arrays(np.asarray(m, np.float64), np.asarray(x, np.float64))
    order = np.where(m >= 1, m, 1.0)
    with np.errstate(all="ignore"):
        sign = np.where(np.fmod(order, 2) == 1, 1.0, -1.0)
        factorial = np.exp(refs.lgamma(order + 1))
        out = sign * factorial * _zeta_reference(order + 1, x)
        out = np.where(m == 0, refs.digamma(x), out)
    return np.where((m < 0) | (m != np.floor(m)), np.nan, out)


zeta_p: Final = n.binary("zeta", n.FLOAT, n.in_float32(_zeta_reference))
polygamma_p: Final = n.binary("polygamma", n.FLOAT, n.in_float32(_polygamma_reference))


def zeta(x: Array, q: Array) -> Array:
    """The Hurwitz zeta function: the sum over n >= 0 of (q + n)**-x."""
    return zeta_p.bind(x, q)


def polygamma(m: Array, x: Array) -> Array:
    """The m-th derivative of digamma at x (m a non-negative integer, in x's float dtype)."""
    return polygamma_p.bind(m, x)


__all__ = [
    "polygamma",
    "polygamma_p",
    "zeta",
    "zeta_p",
]
