"""Cumulative reductions: cumsum, cumprod, their `nan` forms and the array API's
`cumulative_sum`/`cumulative_prod`, each staged as JAX stages it: cumsum and friends are a
nested `jit` (`jit[name=cumsum]`) with static `axis` and `dtype` around one lax scan;
`cumulative_sum` goes through its own `jit[name=_cumsum_with_promotion]`, which widens narrow
integers, and `cumulative_prod` scans without a `jit` of its own.

The operand is flattened when `axis` is None (or it is a weak scalar); bools count in the
default integer type; `dtype=bool` scans the nonzero mask and converts back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lamina_core import lax as _lax
from lamina_core.ir import dtypes as _dtypes
from lamina_core.lax import _convert_element_type
from lamina_core.numpy._reductions import (
    _promote_integer_dtype,
    _user_dtype,
    canonicalize_axis,
    ensure_arraylike,
    ravel,
)
from lamina_core.numpy._ufuncs_composite import where
from lamina_core.numpy._util import Array, ArrayLike, DTypeLike, dtype_of, shape_of
from lamina_core.transforms import jit


def _cumulative(
    name: str, scan: Callable[..., Array], a: ArrayLike, axis: int | None, dtype: Any, out: None,
    fill_nan: int | None = None, promote_integers: bool = False,
) -> Array:  # fmt: skip
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported")
    (a,) = ensure_arraylike(name, a)
    if axis is None or (not shape_of(a) and _dtypes.is_weakly_typed(a)):
        a = ravel(a)
    axis = canonicalize_axis(0 if axis is None else axis, len(shape_of(a)))
    if fill_nan is not None:
        # NaNs count as the scan's identity (JAX tests every dtype: no NaN is never equal).
        a = where(_lax.ne(a, a), np.array(fill_nan, dtype_of(a)), a)
    if dtype is None:
        result_dtype = dtype_of(a)
        if promote_integers or result_dtype == np.dtype(bool):
            result_dtype = _promote_integer_dtype(result_dtype)
        computation_dtype = result_dtype
    elif _user_dtype(dtype) == np.dtype(bool):
        # lax scans need numbers; counting nonzeros keeps [-1, 1] from cancelling.
        result_dtype = np.dtype(bool)
        if dtype_of(a) != result_dtype:
            a = _lax.ne(a, _convert_element_type(0, dtype_of(a), False))
        computation_dtype = _promote_integer_dtype(result_dtype)
    else:
        result_dtype = computation_dtype = _user_dtype(dtype)
    a = _convert_element_type(a, computation_dtype, False)
    return _convert_element_type(scan(a, axis), result_dtype, False)


def _jitted_scan(
    name: str, scan: Callable[..., Array], fill_nan: int | None = None,
    promote_integers: bool = False,
) -> Any:  # fmt: skip
    """The scan as JAX stages it: `jit[name=cumsum]` (or cumprod, or their `nan` forms, which
    count NaNs as `fill_nan`) with static axis and dtype."""

    def body(a: Array, *, axis: int | None, dtype: Any, out: None) -> Array:
        return _cumulative(name, scan, a, axis, dtype, out, fill_nan, promote_integers)

    body.__name__ = body.__qualname__ = name
    return jit(body, static_argnames=("axis", "dtype"))


_cumsum_jit = _jitted_scan("cumsum", _lax.cumsum)
_cumprod_jit = _jitted_scan("cumprod", _lax.cumprod)
_nancumsum_jit = _jitted_scan("nancumsum", _lax.cumsum, 0)
_nancumprod_jit = _jitted_scan("nancumprod", _lax.cumprod, 1)
_cumsum_with_promotion = _jitted_scan("_cumsum_with_promotion", _lax.cumsum, None, True)


def cumsum(
    a: ArrayLike, axis: int | None = None, dtype: DTypeLike | None = None, out: None = None
) -> Array:
    """Cumulative sum along `axis` (of the flattened array when None), as `jax.numpy.cumsum`."""
    return _cumsum_jit(a, axis=axis, dtype=dtype, out=out)


def cumprod(
    a: ArrayLike, axis: int | None = None, dtype: DTypeLike | None = None, out: None = None
) -> Array:
    """Cumulative product along `axis` (flattened when None), as `jax.numpy.cumprod`."""
    return _cumprod_jit(a, axis=axis, dtype=dtype, out=out)


def nancumsum(
    a: ArrayLike, axis: int | None = None, dtype: DTypeLike | None = None, out: None = None
) -> Array:
    """The cumulative sum, NaNs counted as zero (jitted as JAX's)."""
    return _nancumsum_jit(a, axis=axis, dtype=dtype, out=out)


def nancumprod(
    a: ArrayLike, axis: int | None = None, dtype: DTypeLike | None = None, out: None = None
) -> Array:
    """The cumulative product, NaNs counted as one (jitted as JAX's)."""
    return _nancumprod_jit(a, axis=axis, dtype=dtype, out=out)


def _array_api_axis(x: Array, axis: int | None, what: str) -> int:
    nd = len(shape_of(x))
    if nd == 0:
        raise ValueError(
            f"The input must be non-scalar to take a cumulative {what}, however a scalar "
            "value or scalar array was given."
        )
    if axis is None:
        if nd > 1:
            raise ValueError(
                f"The input array has rank {nd}, however axis was not set to an explicit "
                "value. The axis argument is only optional for one-dimensional arrays."
            )
        axis = 0
    return canonicalize_axis(axis, nd)


def _with_initial(x: Array, out: Array, axis: int, initial: int) -> Array:
    shape = list(shape_of(x))
    shape[axis] = 1
    return _lax.concatenate([_lax.full(shape, initial, dtype=dtype_of(out)), out], axis)


def cumulative_sum(
    x: ArrayLike, /, *, axis: int | None = None, dtype: DTypeLike | None = None,
    include_initial: bool = False,
) -> Array:  # fmt: skip
    """The cumulative sum along `axis` (the array API's `cumulative_sum`); integers narrower
    than the default widen to it, as in JAX."""
    (x,) = ensure_arraylike("cumulative_sum", x)
    axis = _array_api_axis(x, axis, "sum")
    user_dtype = None if dtype is None else _user_dtype(dtype)
    out: Array = _cumsum_with_promotion(x, axis=axis, dtype=user_dtype, out=None)
    return _with_initial(x, out, axis, 0) if include_initial else out


def cumulative_prod(
    x: ArrayLike, /, *, axis: int | None = None, dtype: DTypeLike | None = None,
    include_initial: bool = False,
) -> Array:  # fmt: skip
    """The cumulative product along `axis` (the array API's `cumulative_prod`); unlike
    `cumprod` it stages no `jit` of its own, as in JAX."""
    (x,) = ensure_arraylike("cumulative_prod", x)
    axis = _array_api_axis(x, axis, "product")
    user_dtype = None if dtype is None else _user_dtype(dtype)
    out = _cumulative("cumulative_prod", _lax.cumprod, x, axis, user_dtype, None)
    return _with_initial(x, out, axis, 1) if include_initial else out


__all__ = [
    "cumprod",
    "cumsum",
    "cumulative_prod",
    "cumulative_sum",
    "nancumprod",
    "nancumsum",
]
