"""Cumulative reductions (scans) along one axis: cumsum, cumprod, cummax, cummin, cumlogsumexp.

Each primitive takes `axis` (non-negative; the lax functions do not canonicalize it, as in JAX)
and `reverse`. Operands must be numbers (not bool); the result has the operand's type,
weak type included.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import numpy as np

from lamina_core.ir import AbstractValue, Primitive, ShapedArray, abstract_eval_rules, impl_rules
from lamina_core.lax import _checks as c
from lamina_core.lax._reductions import check_number
from lamina_core.lax._types import Array


def cumulative(name: str, scan: Callable[[np.ndarray, int], np.ndarray]) -> Primitive:
    """A scan primitive whose NumPy reference is `scan(x, axis)` (forward direction)."""
    prim = Primitive(name)

    def abstract_eval(x: AbstractValue, *, axis: int, reverse: bool) -> ShapedArray:
        aval = c.array_aval(name, x)
        if axis < 0:
            raise ValueError("XLA operations do not allow negative axes")
        if axis >= aval.ndim:
            raise ValueError(f"axis {axis} is out of bounds for array of shape {aval.shape}")
        check_number(name, aval)
        return aval

    def impl(x: np.ndarray, *, axis: int, reverse: bool) -> np.ndarray:
        x = np.asarray(x)
        narrow = c.kind_of(x.dtype) == "f" and x.dtype.itemsize < 4
        # Narrow floats scan in float32; XLA's CPU scans accumulate at least that wide.
        work = x.astype(np.float32) if narrow else x
        if reverse:
            work = np.flip(work, axis)
        out = scan(work, axis)
        if reverse:
            out = np.flip(out, axis)
        return out.astype(x.dtype)

    abstract_eval_rules.set(prim, abstract_eval)
    impl_rules.set(prim, impl)
    return prim


def _cumsum(x: np.ndarray, axis: int) -> np.ndarray:
    return np.cumsum(x, axis=axis, dtype=x.dtype)


def _cumprod(x: np.ndarray, axis: int) -> np.ndarray:
    return np.cumprod(x, axis=axis, dtype=x.dtype)


def _cummax(x: np.ndarray, axis: int) -> np.ndarray:
    return np.maximum.accumulate(x, axis=axis)


def _cummin(x: np.ndarray, axis: int) -> np.ndarray:
    return np.minimum.accumulate(x, axis=axis)


def _cumlogsumexp(x: np.ndarray, axis: int) -> np.ndarray:
    return np.logaddexp.accumulate(x, axis=axis)


cumsum_p: Final = cumulative("cumsum", _cumsum)
cumprod_p: Final = cumulative("cumprod", _cumprod)
cummax_p: Final = cumulative("cummax", _cummax)
cummin_p: Final = cumulative("cummin", _cummin)
cumlogsumexp_p: Final = cumulative("cumlogsumexp", _cumlogsumexp)


def _bind(prim: Primitive, operand: Any, axis: int, reverse: bool) -> Array:
    return prim.bind(operand, axis=int(axis), reverse=bool(reverse))


def cumsum(operand: Array, axis: int = 0, reverse: bool = False) -> Array:
    """Cumulative sum along `axis`; from the end when `reverse`."""
    return _bind(cumsum_p, operand, axis, reverse)


def cumprod(operand: Array, axis: int = 0, reverse: bool = False) -> Array:
    """Cumulative product along `axis`; from the end when `reverse`."""
    return _bind(cumprod_p, operand, axis, reverse)


def cummax(operand: Array, axis: int = 0, reverse: bool = False) -> Array:
    """Cumulative maximum along `axis`; from the end when `reverse`."""
    return _bind(cummax_p, operand, axis, reverse)


def cummin(operand: Array, axis: int = 0, reverse: bool = False) -> Array:
    """Cumulative minimum along `axis`; from the end when `reverse`."""
    return _bind(cummin_p, operand, axis, reverse)


def cumlogsumexp(operand: Array, axis: int = 0, reverse: bool = False) -> Array:
    """Cumulative log-sum-exp along `axis`; from the end when `reverse`."""
    return _bind(cumlogsumexp_p, operand, axis, reverse)


__all__ = [
    "cumlogsumexp",
    "cumlogsumexp_p",
    "cummax",
    "cummax_p",
    "cummin",
    "cummin_p",
    "cumprod",
    "cumprod_p",
    "cumsum",
    "cumsum_p",
]
