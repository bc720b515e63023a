"""One-dimensional signal functions: `convolve`, `correlate` and `interp`, with `jax.numpy`'s
semantics. `convolve` and `correlate` are jitted, as JAX's, around one `_conv` kernel that
calls `lax.conv_general_dilated` on the inputs seen as one-channel images.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

import lamina_core.numpy as jnp
from lamina_core import lax as _lax
from lamina_core.ir import dtypes as _dtypes
from lamina_core.numpy._indexing import rewriting_take
from lamina_core.numpy._promote import promote_dtypes, promote_dtypes_inexact
from lamina_core.numpy._reductions import ensure_arraylike
from lamina_core.numpy._util import Array, ArrayLike, DTypeLike, dtype_of, shape_of
from lamina_core.trace import typeof
from lamina_core.transforms import Jitted

_MODES = ("full", "same", "valid")


@partial(Jitted, static_argnames=("mode", "op", "precision", "preferred_element_type"))
def _conv(
    x: Any, y: Any, mode: str, op: str, precision: Any, preferred_element_type: DTypeLike | None
) -> Array:
    if len(shape_of(x)) != 1 or len(shape_of(y)) != 1:
        raise ValueError(f"{op}() only support 1-dimensional inputs.")
    if preferred_element_type is None:
        # As NumPy, the sums are computed in an inexact type unless the caller asks otherwise.
        x, y = promote_dtypes_inexact(x, y)
    else:
        x, y = promote_dtypes(x, y)
    if shape_of(x)[0] == 0 or shape_of(y)[0] == 0:
        raise ValueError(
            f"{op}: inputs cannot be empty, got shapes {shape_of(x)} and {shape_of(y)}."
        )
    out_order = slice(None)
    if op == "correlate":
        y = jnp.conj(y)
        if shape_of(x)[0] < shape_of(y)[0]:
            # Correlating the other way round gives the same sums in reverse order.
            x, y = y, x
            out_order = slice(None, None, -1)
    else:
        if shape_of(x)[0] < shape_of(y)[0]:
            x, y = y, x
        y = jnp.flip(y)
    k = shape_of(y)[0]
    if mode == "valid":
        padding = [(0, 0)]
    elif mode == "same":
        padding = [(k // 2, k - k // 2 - 1)]
    elif mode == "full":
        padding = [(k - 1, k - 1)]
    else:
        raise ValueError(f"mode must be one of {list(_MODES)}")
    result = _lax.conv_general_dilated(
        x[None, None, :],
        y[None, None, :],
        (1,),
        padding,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )
    return result[0, 0, out_order]


def convolve(
    a: ArrayLike,
    v: ArrayLike,
    mode: str = "full",
    *,
    precision: Any = None,
    preferred_element_type: DTypeLike | None = None,
) -> Array:
    """The discrete convolution of the 1-D arrays `a` and `v` (`mode` full, same or valid),
    as `jax.numpy.convolve`."""
    a, v = ensure_arraylike("convolve", a, v)
    return _convolve(
        a, v, mode=mode, precision=precision, preferred_element_type=preferred_element_type
    )


def _named(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a kernel the public name its `jit` equation prints (JAX jits the API functions)."""

    def rename(fun: Callable[..., Any]) -> Callable[..., Any]:
        fun.__name__ = fun.__qualname__ = name
        return fun

    return rename


@partial(Jitted, static_argnames=("mode", "precision", "preferred_element_type"))
@_named("convolve")
def _convolve(
    a: Array, v: Array, mode: str, precision: Any, preferred_element_type: DTypeLike | None
) -> Array:
    return _conv(
        a, v, mode=mode, op="convolve", precision=precision,
        preferred_element_type=preferred_element_type,
    )  # fmt: skip


def correlate(
    a: ArrayLike,
    v: ArrayLike,
    mode: str = "valid",
    *,
    precision: Any = None,
    preferred_element_type: DTypeLike | None = None,
) -> Array:
    """The cross-correlation of the 1-D arrays `a` and `v` (`v` conjugated; `mode` full, same
    or valid), as `jax.numpy.correlate`."""
    a, v = ensure_arraylike("correlate", a, v)
    return _correlate(
        a, v, mode=mode, precision=precision, preferred_element_type=preferred_element_type
    )


@partial(Jitted, static_argnames=("mode", "precision", "preferred_element_type"))
@_named("correlate")
def _correlate(
    a: Array, v: Array, mode: str, precision: Any, preferred_element_type: DTypeLike | None
) -> Array:
    return _conv(
        a, v, mode=mode, op="correlate", precision=precision,
        preferred_element_type=preferred_element_type,
    )  # fmt: skip


def _extrapolates(bound: Any, name: str) -> bool:
    if not isinstance(bound, str):
        return False
    if bound != "extrapolate":
        raise ValueError(
            f"the only valid string value of `{name}` is 'extrapolate', but got: {bound!r}"
        )
    return True


def interp(
    x: ArrayLike,
    xp: ArrayLike,
    fp: ArrayLike,
    left: ArrayLike | str | None = None,
    right: ArrayLike | str | None = None,
    period: ArrayLike | None = None,
) -> Array:
    """Piecewise-linear interpolation at `x` of the points `(xp, fp)` (`xp` increasing; `left`
    and `right` for points outside, or `"extrapolate"`; `period` for periodic `xp`), as
    `jax.numpy.interp`: one jitted call, with `left`/`right` static when they are strings or
    None and `period` static when None."""
    static = tuple(
        name
        for name, value, is_static in (
            ("left", left, isinstance(left, str) or left is None),
            ("right", right, isinstance(right, str) or right is None),
            ("period", period, period is None),
        )
        if is_static
    )
    jitted = _interp_jits.get(static)
    if jitted is None:
        jitted = _interp_jits[static] = Jitted(_interp, static_argnames=static)
    return jitted(x, xp, fp, left, right, period)


_interp_jits: dict[tuple[str, ...], Jitted] = {}
"""One jitted `_interp` per choice of static arguments (JAX's jit cache is keyed the same)."""


def _interp(
    x: ArrayLike,
    xp: ArrayLike,
    fp: ArrayLike,
    left: ArrayLike | str | None = None,
    right: ArrayLike | str | None = None,
    period: ArrayLike | None = None,
) -> Array:
    x, xp, fp = ensure_arraylike("interp", x, xp, fp)
    if shape_of(xp) != shape_of(fp) or len(shape_of(xp)) != 1:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    x_arr, xp_arr = promote_dtypes_inexact(x, xp)
    (fp_arr,) = promote_dtypes_inexact(fp)
    extrapolate_left = _extrapolates(left, "left")
    extrapolate_right = _extrapolates(right, "right")
    if _dtypes.issubdtype(dtype_of(x_arr), np.complexfloating):
        raise ValueError("jnp.interp: complex x values not supported.")

    if period is not None:
        if np.ndim(period) != 0:
            # JAX reports the traced period of its jitted implementation.
            shown = typeof(jnp.asarray(period)).str_short(False)
            raise ValueError(f"period must be a scalar; got JitTracer({shown})")
        period = jnp.abs(period)
        x_arr = jnp.remainder(x_arr, period)
        xp_arr = jnp.remainder(xp_arr, period)
        xp_arr, fp_arr = _lax.sort_key_val(xp_arr, fp_arr)
        n = shape_of(xp_arr)[0]
        xp_arr = jnp.concatenate(
            [
                jnp.subtract(_lax.slice_in_dim(xp_arr, n - 1, n), period),
                xp_arr,
                jnp.add(_lax.slice_in_dim(xp_arr, 0, 1), period),
            ]
        )
        fp_arr = jnp.concatenate(
            [_lax.slice_in_dim(fp_arr, n - 1, n), fp_arr, _lax.slice_in_dim(fp_arr, 0, 1)]
        )

    n = shape_of(xp_arr)[0]
    i = jnp.clip(jnp.searchsorted(xp_arr, x_arr, side="right"), 1, n - 1)
    below = jnp.subtract(i, 1)
    fp_hi, fp_lo = rewriting_take(fp_arr, i), rewriting_take(fp_arr, below)
    xp_lo = rewriting_take(xp_arr, below)
    df = jnp.subtract(fp_hi, fp_lo)
    dx = jnp.subtract(rewriting_take(xp_arr, i), xp_lo)
    delta = jnp.subtract(x_arr, xp_lo)
    # Steps shorter than this are treated as jumps, so that no NaN reaches the gradient.
    epsilon = np.spacing(np.finfo(dtype_of(xp_arr)).eps)
    flat = jnp.less_equal(jnp.abs(dx), epsilon)
    slope_part = jnp.multiply(jnp.divide(delta, jnp.where(flat, 1, dx)), df)
    f = jnp.where(flat, fp_lo, jnp.add(fp_lo, slope_part))

    if not extrapolate_left and period is None:
        left_value = rewriting_take(fp_arr, 0) if left is None else left
        f = jnp.where(jnp.less(x_arr, rewriting_take(xp_arr, 0)), left_value, f)
    if not extrapolate_right and period is None:
        right_value = rewriting_take(fp_arr, -1) if right is None else right
        f = jnp.where(jnp.greater(x_arr, rewriting_take(xp_arr, -1)), right_value, f)
    return f


__all__ = ["convolve", "correlate", "interp"]
