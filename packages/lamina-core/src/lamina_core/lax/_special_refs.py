"""NumPy references for the special functions NumPy lacks: erf, erfc, erf_inv, lgamma, digamma.

They compute in float64 (with Python's `math` and `statistics` where those have the function)
and leave rounding to the primitive's dtype to the evaluator. They are references for tests and
eager evaluation, not fast implementations.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from typing import Final

import numpy as np

_STANDARD_NORMAL: Final = statistics.NormalDist()


def _elementwise(fn: Callable[[float], float]) -> Callable[[np.ndarray], np.ndarray]:
    ufunc = np.frompyfunc(fn, 1, 1)

    def apply(x: np.ndarray) -> np.ndarray:
        return np.asarray(ufunc(np.asarray(x, np.float64)), np.float64)

    return apply


def _lgamma(x: float) -> float:
    try:
        return math.lgamma(x)
    except ValueError:  # a pole: a non-positive integer
        return math.inf


def _erf_inv(y: float) -> float:
    if math.isnan(y) or abs(y) > 1:
        return math.nan
    if abs(y) == 1:
        return math.copysign(math.inf, y)
    if y == 0:
        return y
    # erf(x) = 2 Phi(x sqrt 2) - 1 for the standard normal CDF Phi.
    return _STANDARD_NORMAL.inv_cdf((y + 1) / 2) / math.sqrt(2)


erf: Final = _elementwise(math.erf)
erfc: Final = _elementwise(math.erfc)
lgamma: Final = _elementwise(_lgamma)
erf_inv: Final = _elementwise(_erf_inv)


def digamma(x: np.ndarray) -> np.ndarray:
    """psi(x) by reflection below 1/2, recurrence up to 6, then the asymptotic series."""
    x = np.asarray(x, np.float64)
    reflect = x < 0.5
    z = np.where(reflect, 1 - x, x)
    shift = np.zeros_like(z)
    for _ in range(6):
        small = z < 6
        shift = shift - np.where(small, 1 / z, 0)
        z = np.where(small, z + 1, z)
    w = 1 / (z * z)
    # Bernoulli terms B_2k / (2k z^2k) for k = 1..5; the next is below 1e-13 at z >= 6.
    tail = w * (1 / 12 - w * (1 / 120 - w * (1 / 252 - w * (1 / 240 - w / 132))))
    result = np.log(z) - 0.5 / z - tail + shift
    # Reduce x before tan(pi x), which loses precision for large |x|.
    offset = x - np.round(x)
    result = np.where(reflect, result - np.pi / np.tan(np.pi * offset), result)
    pole = (x <= 0) & (x == np.floor(x))
    return np.where(pole, np.nan, result)
