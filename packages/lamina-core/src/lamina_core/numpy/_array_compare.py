"""Comparing whole arrays: `isclose`, `allclose`, `array_equal`, `array_equiv`, and the
NaN-ignoring elementwise `fmax`/`fmin`, with `jax.numpy`'s semantics (infinities close only
to themselves, NaNs close to nothing unless `equal_nan`)."""

from __future__ import annotations

from typing import Any

import numpy as np

import lamina_core.numpy as jnp
from lamina_core import dtypes as _dtypes
from lamina_core import lax as _lax
from lamina_core.numpy._promote import promote_dtypes, promote_dtypes_inexact
from lamina_core.numpy._reductions import ensure_arraylike
from lamina_core.numpy._util import Array, ArrayLike, shape_of


def isclose(
    a: ArrayLike, b: ArrayLike, rtol: ArrayLike = 1e-05, atol: ArrayLike = 1e-08,
    equal_nan: bool = False,
) -> Array:  # fmt: skip
    """Elementwise `|a - b| <= atol + rtol * |b|`, as `jax.numpy.isclose`."""
    a, b = ensure_arraylike("isclose", a, b)
    a, b = promote_dtypes_inexact(a, b)
    dtype = a.dtype
    if not _dtypes.issubdtype(dtype, np.inexact):
        return _lax.eq(a, b)
    real = np.finfo(dtype).dtype if _dtypes.issubdtype(dtype, np.complexfloating) else dtype
    rtol = _lax.convert_element_type(rtol, real)
    atol = _lax.convert_element_type(atol, real)
    out = _lax.le(_lax.abs(_lax.sub(a, b)), _lax.add(atol, _lax.mul(rtol, _lax.abs(b))))
    a_inf, b_inf = jnp.isinf(a), jnp.isinf(b)
    out = jnp.logical_and(out, jnp.logical_not(jnp.logical_or(a_inf, b_inf)))
    out = jnp.logical_or(out, jnp.logical_and(jnp.logical_and(a_inf, b_inf), _lax.eq(a, b)))
    a_nan, b_nan = jnp.isnan(a), jnp.isnan(b)
    out = jnp.logical_and(out, jnp.logical_not(jnp.logical_or(a_nan, b_nan)))
    if equal_nan:
        out = jnp.logical_or(out, jnp.logical_and(a_nan, b_nan))
    return out


def allclose(
    a: ArrayLike, b: ArrayLike, rtol: ArrayLike = 1e-05, atol: ArrayLike = 1e-08,
    equal_nan: bool = False,
) -> Array:  # fmt: skip
    """Whether every element of `a` is close to `b`'s, as `jax.numpy.allclose`."""
    return jnp.all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1: ArrayLike, a2: ArrayLike, equal_nan: bool = False) -> Array:
    """Same shape and equal elements (NaNs equal with `equal_nan`), as a bool array."""
    try:
        a1, a2 = jnp.asarray(a1), jnp.asarray(a2)
    except TypeError:
        return jnp.asarray(False)
    if shape_of(a1) != shape_of(a2):
        return jnp.asarray(False)
    eq = jnp.equal(a1, a2)
    if equal_nan:
        eq = jnp.logical_or(eq, jnp.logical_and(jnp.isnan(a1), jnp.isnan(a2)))
    return jnp.all(eq)


def array_equiv(a1: ArrayLike, a2: ArrayLike) -> Array:
    """Equal elements after broadcasting (shapes that do not broadcast are an error, as in
    JAX 0.10.2)."""
    a1, a2 = jnp.asarray(a1), jnp.asarray(a2)
    return jnp.all(jnp.equal(a1, a2))


def _nan_choice(x1: Any, x2: Any, prefer: Any) -> Array:
    x1, x2 = promote_dtypes(*ensure_arraylike("fmax", x1, x2))
    return jnp.where(jnp.logical_or(prefer(x1, x2), jnp.isnan(x2)), x1, x2)


def fmax(x1: ArrayLike, x2: ArrayLike) -> Array:
    """The elementwise maximum, ignoring NaNs (NaN only where both are), as `jnp.fmax`."""
    return _nan_choice(x1, x2, jnp.greater)


def fmin(x1: ArrayLike, x2: ArrayLike) -> Array:
    """The elementwise minimum, ignoring NaNs (NaN only where both are), as `jnp.fmin`."""
    return _nan_choice(x1, x2, jnp.less)


__all__ = ["allclose", "array_equal", "array_equiv", "fmax", "fmin", "isclose"]
