"""Comparing whole arrays: `isclose`, `allclose`, `array_equal`, `array_equiv`, and the
NaN-ignoring elementwise `fmax`/`fmin`, with `jax.numpy`'s semantics (infinities close only
to themselves, NaNs close to nothing unless `equal_nan`)."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

import lamina_core.numpy as jnp
from lamina_core import lax as _lax
from lamina_core.ir import dtypes as _dtypes
from lamina_core.numpy._promote import (
    check_arraylike,
    promote_args,
    promote_args_inexact,
)
from lamina_core.numpy._util import Array, ArrayLike, shape_of
from lamina_core.transforms import Jitted


@partial(Jitted, static_argnames=("equal_nan",))
def isclose(
    a: ArrayLike, b: ArrayLike, rtol: ArrayLike = 1e-05, atol: ArrayLike = 1e-08,
    equal_nan: bool = False,
) -> Array:  # fmt: skip
    """Elementwise `a == b or (isfinite(b) and |a - b| <= atol + rtol * |b|)`, jitted as
    `jax.numpy.isclose` (NaNs close to each other only with `equal_nan`)."""
    a, b = promote_args("isclose", a, b)
    a, b = promote_args_inexact("isclose", a, b)
    dtype = a.dtype
    if _dtypes.issubdtype(dtype, np.complexfloating):
        dtype = np.finfo(dtype).dtype
    rtol = _lax.convert_element_type(rtol, dtype)
    atol = _lax.convert_element_type(atol, dtype)
    both_nan = jnp.logical_and(jnp.isnan(a), jnp.isnan(b))
    finite = jnp.isfinite(b)
    in_range = _lax.le(_lax.abs(_lax.sub(a, b)), _lax.add(atol, _lax.mul(rtol, _lax.abs(b))))
    out = jnp.logical_or(_lax.eq(a, b), jnp.logical_and(finite, in_range))
    return jnp.logical_or(out, both_nan) if equal_nan else out


@partial(Jitted, static_argnames=("equal_nan",))
def allclose(
    a: ArrayLike, b: ArrayLike, rtol: ArrayLike = 1e-05, atol: ArrayLike = 1e-08,
    equal_nan: bool = False,
) -> Array:  # fmt: skip
    """Whether every element of `a` is close to `b`'s, jitted as `jax.numpy.allclose`."""
    check_arraylike("allclose", a, b)
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
    """`x1` where `prefer(x1, x2)` or `x2` is NaN, else `x2` (JAX's staging: no promotion
    before the comparison)."""
    return jnp.where(jnp.bitwise_or(prefer(x1, x2), jnp.isnan(x2)), x1, x2)


@Jitted
def fmax(x1: ArrayLike, x2: ArrayLike) -> Array:
    """The elementwise maximum, ignoring NaNs (NaN only where both are), jitted as
    `jnp.fmax`."""
    return _nan_choice(x1, x2, jnp.greater)


@Jitted
def fmin(x1: ArrayLike, x2: ArrayLike) -> Array:
    """The elementwise minimum, ignoring NaNs (NaN only where both are), jitted as
    `jnp.fmin`."""
    return _nan_choice(x1, x2, jnp.less)


__all__ = ["allclose", "array_equal", "array_equiv", "fmax", "fmin", "isclose"]
