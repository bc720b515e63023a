"""Transcendental and special-function primitives: exp and log families, trigonometric and
hyperbolic functions and their inverses, roots, the logistic, erf and the gamma family.

The NumPy references compute 16-bit floats in float32 (XLA's CPU backend does too) and the
special functions NumPy lacks in float64 with Python's `math`; see `_special_refs`. The `lax`
functions of JAX's accuracy-aware ops take `accuracy`, kept as a param and printed only when
it is set.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

import numpy as np

from lamina_core.ir import Primitive
from lamina_core.lax import _nary as n
from lamina_core.lax import _special_refs as refs
from lamina_core.lax._types import Array
from lamina_core.trace import CHECKED_SCOPES, insert_pvary


class AccuracyMode(enum.Enum):
    """A request for the most accurate (or the default) implementation of an op."""

    HIGHEST = 1
    DEFAULT = 2


@dataclass(frozen=True, slots=True)
class Tolerance:
    """The error an op's implementation may have: atol with rtol, or atol with ulps."""

    atol: float = 0.0
    rtol: float = 0.0
    ulps: int = 0

    def __post_init__(self) -> None:
        if self.atol < 0.0 or self.rtol < 0.0 or self.ulps < 0:
            raise ValueError("Tolerances must be non-negative.")
        if self.atol == 0.0 and self.rtol == 0.0 and self.ulps == 0:
            raise ValueError("At least one of atol, rtol, or ulps must be set.")


Accuracy = Tolerance | AccuracyMode | None


def _logistic(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))  # type: ignore[no-any-return]  # NumPy ufunc arithmetic


def _exp2(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    # XLA expands exp2(x) as exp(x * ln 2) with ln 2 and the product rounded to x's dtype,
    # which for large |x| is many ulps (a quarter, in 16 bits) from 2**x; JAX agrees.
    ln2 = np.array(np.log(2), x.real.dtype)
    product = np.multiply(x, ln2, dtype=x.dtype)
    wide = np.complex128 if x.dtype.kind == "c" else np.float64
    return np.exp(product.astype(wide))  # type: ignore[no-any-return]  # NumPy ufunc


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return 1 / np.sqrt(x)  # type: ignore[no-any-return]  # NumPy ufunc arithmetic


def _accurate(name: str, reference: n.Reference, accepted: n.DTypes = n.INEXACT) -> Primitive:
    return n.unary(name, accepted, n.in_float32(reference), accuracy=True)


def _plain(name: str, reference: n.Reference, accepted: n.DTypes = n.INEXACT) -> Primitive:
    return n.unary(name, accepted, n.in_float32(reference))


exp_p: Final = _accurate("exp", np.exp)
exp2_p: Final = n.unary("exp2", n.INEXACT, _exp2, accuracy=True)
log_p: Final = _accurate("log", np.log)
log1p_p: Final = _accurate("log1p", np.log1p)
expm1_p: Final = _accurate("expm1", np.expm1)
tanh_p: Final = _accurate("tanh", np.tanh)
logistic_p: Final = _accurate("logistic", _logistic)
sin_p: Final = _accurate("sin", np.sin)
cos_p: Final = _accurate("cos", np.cos)
tan_p: Final = _accurate("tan", np.tan)
sqrt_p: Final = _accurate("sqrt", np.sqrt)
rsqrt_p: Final = _accurate("rsqrt", _rsqrt)
cbrt_p: Final = _accurate("cbrt", np.cbrt, n.FLOAT)
asin_p: Final = _plain("asin", np.arcsin)
acos_p: Final = _plain("acos", np.arccos)
atan_p: Final = _plain("atan", np.arctan)
sinh_p: Final = _plain("sinh", np.sinh)
cosh_p: Final = _plain("cosh", np.cosh)
asinh_p: Final = _plain("asinh", np.arcsinh)
acosh_p: Final = _plain("acosh", np.arccosh)
atanh_p: Final = _plain("atanh", np.arctanh)
erf_p: Final = _plain("erf", refs.erf, n.FLOAT)
erfc_p: Final = _plain("erfc", refs.erfc, n.FLOAT)
erf_inv_p: Final = _plain("erf_inv", refs.erf_inv, n.FLOAT)
lgamma_p: Final = _plain("lgamma", refs.lgamma, n.FLOAT)
digamma_p: Final = _plain("digamma", refs.digamma, n.FLOAT)
atan2_p: Final = n.binary("atan2", n.INEXACT, n.in_float32(np.arctan2))


def exp(x: Array, accuracy: Accuracy = None) -> Array:
    return exp_p.bind(x, accuracy=accuracy)


def exp2(x: Array, accuracy: Accuracy = None) -> Array:
    return exp2_p.bind(x, accuracy=accuracy)


def log(x: Array, accuracy: Accuracy = None) -> Array:
    return log_p.bind(x, accuracy=accuracy)


def log1p(x: Array, accuracy: Accuracy = None) -> Array:
    return log1p_p.bind(x, accuracy=accuracy)


def expm1(x: Array, accuracy: Accuracy = None) -> Array:
    return expm1_p.bind(x, accuracy=accuracy)


def tanh(x: Array, accuracy: Accuracy = None) -> Array:
    return tanh_p.bind(x, accuracy=accuracy)


def logistic(x: Array, accuracy: Accuracy = None) -> Array:
    """1 / (1 + exp(-x))."""
    return logistic_p.bind(x, accuracy=accuracy)


def sin(x: Array, accuracy: Accuracy = None) -> Array:
    return sin_p.bind(x, accuracy=accuracy)


def cos(x: Array, accuracy: Accuracy = None) -> Array:
    return cos_p.bind(x, accuracy=accuracy)


def tan(x: Array, accuracy: Accuracy = None) -> Array:
    return tan_p.bind(x, accuracy=accuracy)


def sqrt(x: Array, accuracy: Accuracy = None) -> Array:
    return sqrt_p.bind(x, accuracy=accuracy)


def rsqrt(x: Array, accuracy: Accuracy = None) -> Array:
    """1 / sqrt(x)."""
    return rsqrt_p.bind(x, accuracy=accuracy)


def cbrt(x: Array, accuracy: Accuracy = None) -> Array:
    return cbrt_p.bind(x, accuracy=accuracy)


def asin(x: Array) -> Array:
    return asin_p.bind(x)


def acos(x: Array) -> Array:
    return acos_p.bind(x)


def atan(x: Array) -> Array:
    return atan_p.bind(x)


def sinh(x: Array) -> Array:
    return sinh_p.bind(x)


def cosh(x: Array) -> Array:
    return cosh_p.bind(x)


def asinh(x: Array) -> Array:
    return asinh_p.bind(x)


def acosh(x: Array) -> Array:
    return acosh_p.bind(x)


def atanh(x: Array) -> Array:
    return atanh_p.bind(x)


def atan2(x: Array, y: Array) -> Array:
    """The angle of the point (y, x): arctan(x / y) in the right quadrant."""
    if CHECKED_SCOPES[0]:
        x, y = insert_pvary(x, y)
    return atan2_p.bind(x, y)


def erf(x: Array) -> Array:
    return erf_p.bind(x)


def erfc(x: Array) -> Array:
    """1 - erf(x), accurate where erf(x) is near 1."""
    return erfc_p.bind(x)


def erf_inv(x: Array) -> Array:
    return erf_inv_p.bind(x)


def lgamma(x: Array) -> Array:
    """log |Gamma(x)|."""
    return lgamma_p.bind(x)


def digamma(x: Array) -> Array:
    """The logarithmic derivative of Gamma."""
    return digamma_p.bind(x)


__all__ = [
    "AccuracyMode",
    "Tolerance",
    "acos",
    "acos_p",
    "acosh",
    "acosh_p",
    "asin",
    "asin_p",
    "asinh",
    "asinh_p",
    "atan",
    "atan2",
    "atan2_p",
    "atan_p",
    "atanh",
    "atanh_p",
    "cbrt",
    "cbrt_p",
    "cos",
    "cos_p",
    "cosh",
    "cosh_p",
    "digamma",
    "digamma_p",
    "erf",
    "erf_inv",
    "erf_inv_p",
    "erf_p",
    "erfc",
    "erfc_p",
    "exp",
    "exp2",
    "exp2_p",
    "exp_p",
    "expm1",
    "expm1_p",
    "lgamma",
    "lgamma_p",
    "log",
    "log1p",
    "log1p_p",
    "log_p",
    "logistic",
    "logistic_p",
    "rsqrt",
    "rsqrt_p",
    "sin",
    "sin_p",
    "sinh",
    "sinh_p",
    "sqrt",
    "sqrt_p",
    "tan",
    "tan_p",
    "tanh",
    "tanh_p",
]
