"""`jax.numpy.pad`: every NumPy padding mode (constant, edge, wrap, reflect, symmetric,
linear_ramp, the statistics maximum/minimum/mean/median, empty) and a callable mode.

As in JAX, the widths are static Python values and the string modes are staged in a nested
`jit` named `_pad` whose static arguments are the widths, the mode, `stat_length`,
`end_values` and `reflect_type`; `constant_values` stays a traced argument.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

import lamina_core.numpy as jnp
from lamina_core import lax as _lax
from lamina_core.ir import dtypes as _dtypes
from lamina_core.lax import _convert_element_type
from lamina_core.numpy._reductions import ensure_arraylike
from lamina_core.numpy._util import Array, ArrayLike, dtype_of, shape_of
from lamina_core.trace import EVAL_TRACE, _current_trace, concrete_or_error
from lamina_core.transforms import Jitted
from lamina_core.tree import tree_util as _tree_util

Pairs = tuple[tuple[Any, Any], ...]

# The keyword arguments each string mode understands (others are rejected, as in JAX).
_MODE_KWARGS: dict[str, tuple[str, ...]] = {
    "constant": ("constant_values",),
    "edge": (),
    "empty": (),
    "wrap": (),
    "linear_ramp": ("end_values",),
    "maximum": ("stat_length",),
    "minimum": ("stat_length",),
    "mean": ("stat_length",),
    "median": ("stat_length",),
    "reflect": ("reflect_type",),
    "symmetric": ("reflect_type",),
}


def _scalar_entry(v: Any, name: str, original: Any) -> Any:
    if np.shape(v):
        raise TypeError(f"`{name}` entries must be the same shape: {original}")
    return v


def _as_pairs(values: Any, nd: int, name: str) -> Pairs:
    """`values` (a scalar, `(v,)`, `(before, after)`, `((before, after),)` or one pair per
    axis) as one `(before, after)` pair of NumPy scalars for each of `nd` axes."""
    concrete = _tree_util.tree_map(
        lambda x: concrete_or_error(x, f"{name} argument of jnp.pad"), values
    )
    try:
        arr = np.asarray(concrete)
    except ValueError as err:
        if "inhomogeneous" in str(err):
            raise TypeError(f"`{name}` entries must be the same shape: {concrete}") from err
        raise

    def entry(v: Any) -> Any:
        return _scalar_entry(v, name, concrete)

    if arr.shape == (nd, 2):
        return tuple((entry(row[0]), entry(row[1])) for row in arr)
    if arr.shape == (1, 2):
        pair = (entry(arr[0, 0]), entry(arr[0, 1]))
    elif arr.shape == (2,):
        pair = (entry(arr[0]), entry(arr[1]))
    elif arr.shape in ((1,), ()):
        v = entry(arr.reshape(-1)[0])
        pair = (v, v)
    else:
        raise ValueError(
            f"jnp.pad: {name} with nd={nd} has unsupported shape {arr.shape}. "
            f"Valid shapes are ({nd}, 2), (1, 2), (2,), (1,), or ()."
        )
    return tuple(pair for _ in range(nd))


def _is_integral(v: Any) -> bool:
    try:
        operator.index(v)
    except TypeError:
        return False
    return True


def _no_padding_on_empty(width: tuple[int, int], mode: str) -> None:
    if width[0] > 0 or width[1] > 0:
        raise ValueError(f"Cannot apply '{mode}' padding to empty axis")


def _weak(x: Array) -> bool:
    return _dtypes.is_weakly_typed(x)


def _cut(x: Array, start: Any, stop: Any, axis: int) -> Array:
    return _lax.slice_in_dim(x, start, stop, axis=axis)


# --- modes -----------------------------------------------------------------------------------
# Each mode stages the equations JAX's does, in its order: the widths stay the NumPy scalars
# `_as_pairs` made, and every side's piece is concatenated even when it is empty.


def _pad_constant(x: Array, widths: Pairs, values: Array) -> Array:
    nd = len(shape_of(x))
    values = _convert_element_type(jnp.asarray(values), dtype_of(x), _weak(x))
    vshape = shape_of(values)
    if len(vshape) == 1 and vshape[0] == 1:
        values = jnp.squeeze(values)
        vshape = ()
    if not vshape:
        return _lax.pad(x, values, [(lo, hi, 0) for lo, hi in widths])
    if len(vshape) == 1 and vshape[0] != 2:
        raise ValueError(
            f"jnp.pad: constant_values has unsupported shape {vshape}. If the shape is 1D or "
            "2D, the last dimension must be of size 1 or 2."
        )
    table = jnp.broadcast_to(values, (nd, 2))
    for axis in range(nd):
        for side in (0, 1):
            if widths[axis][side] == 0:
                continue
            fill = table[axis, side]
            config = [(0, 0, 0)] * nd
            config[axis] = (widths[axis][0], 0, 0) if side == 0 else (0, widths[axis][1], 0)
            x = _lax.pad(x, fill, config)
    return x


def _pad_wrap(x: Array, widths: Pairs) -> Array:
    for axis, (before, after) in enumerate(widths):
        n = shape_of(x)[axis]
        if n == 0:
            _no_padding_on_empty((before, after), "wrap")
            continue
        # Whole copies of the axis cover most of each pad; a partial copy the remainder.
        whole_before, part_before = divmod(before, n)
        whole_after, part_after = divmod(after, n)
        pieces = [_cut(x, n - part_before, n, axis)] if part_before > 0 else []
        pieces += [x] * (whole_before + whole_after + 1)
        if part_after > 0:
            pieces.append(_cut(x, 0, part_after, axis))
        x = _lax.concatenate(pieces, axis)
    return x


def _pad_edge(x: Array, widths: Pairs) -> Array:
    for axis, (before, after) in enumerate(widths):
        n = shape_of(x)[axis]
        if n == 0:
            _no_padding_on_empty((before, after), "edge")
            continue
        head = jnp.repeat(_cut(x, 0, 1, axis), before, axis=axis)
        tail = jnp.repeat(_cut(x, n - 1, n, axis), after, axis=axis)
        x = _lax.concatenate([head, x, tail], axis)
    return x


def _mirror_side(
    x: Array, axis: int, n: int, width: Any, leading: bool, mode: str, odd: bool
) -> Array:
    """One side of a reflect/symmetric pad along `axis` (original size `n`), mirroring the
    already padded array again whenever `width` exceeds what one mirror image provides."""
    skip = 1 if mode == "reflect" and n > 1 else 0
    # The tail slice keeps the last element out (`-1`) only when reflecting a longer axis.
    tail_stop = None if mode == "symmetric" or n == 1 else -1
    pivot = _cut(x, 0, 1, axis) if leading else _cut(x, -1, None, axis)
    while width > 0:
        step = min(width, n - skip)
        width -= step
        if leading:
            image = _cut(x, skip, skip + step, axis)
        else:
            image = _cut(x, -(step + skip), tail_stop, axis)
        image = jnp.flip(image, axis=axis)
        if odd:
            image = 2 * pivot - image
            if n > 1:
                # The next image is mirrored about the new outermost value.
                pivot = _cut(image, 0, 1, axis) if leading else _cut(image, -1, None, axis)
        x = _lax.concatenate([image, x] if leading else [x, image], axis)
    return x


def _pad_mirror(x: Array, widths: Pairs, mode: str, reflect_type: str) -> Array:
    if reflect_type not in ("even", "odd"):
        raise AssertionError(f"reflect_type must be 'even' or 'odd', got {reflect_type!r}")
    odd = reflect_type == "odd"
    for axis, (before, after) in enumerate(widths):
        n = shape_of(x)[axis]
        if n == 0:
            _no_padding_on_empty((before, after), mode)
            continue
        if before == 0 and after == 0:
            continue
        x = _mirror_side(x, axis, n, before, True, mode, odd)
        x = _mirror_side(x, axis, n, after, False, mode, odd)
    return x


def _ramp(end: Any, edge: Array, count: Any, x: Array, axis: int) -> Array:
    """`count` values from `end` toward (not reaching) the edge slab `edge`, along `axis`."""
    ramp = jnp.linspace(
        end, jnp.squeeze(edge, axis), count, endpoint=False, dtype=dtype_of(x), axis=axis
    )
    return _convert_element_type(ramp, dtype_of(ramp), _weak(x))


def _pad_linear_ramp(x: Array, widths: Pairs, ends: Pairs) -> Array:
    for axis, (before, after) in enumerate(widths):
        first, last = _cut(x, 0, 1, axis), _cut(x, -1, None, axis)
        head = _ramp(ends[axis][0], first, before, x, axis)
        tail = _ramp(ends[axis][1], last, after, x, axis)
        x = _lax.concatenate([head, x, jnp.flip(tail, axis)], axis)
    return x


_STATISTICS: dict[str, str] = {
    "maximum": "amax",
    "minimum": "amin",
    "mean": "mean",
    "median": "median",
}
"""The reduction of each statistic mode, by name (looked up when called: this module is
imported while `lamina_core.numpy` is still being built)."""


def _pad_statistic(x: Array, widths: Pairs, stat_length: Pairs | None, mode: str) -> Array:
    stat: Callable[..., Array] = getattr(jnp, _STATISTICS[mode])
    dtype = dtype_of(x)
    for axis, (before, after) in enumerate(widths):
        if stat_length is None:
            low = high = stat(x, axis=axis, keepdims=True)
        else:
            n = shape_of(x)[axis]
            count_low, count_high = stat_length[axis]
            if count_low == 0 or count_high == 0:
                raise ValueError("stat_length of 0 yields no value for padding")
            count_low, count_high = min(count_low, n), min(count_high, n)
            head, tail = _cut(x, 0, count_low, axis), _cut(x, -count_high, None, axis)
            low = stat(head, axis=axis, keepdims=True)
            high = stat(tail, axis=axis, keepdims=True)
        if np.issubdtype(dtype, np.integer):
            # Integer arrays take the statistic rounded half to even, not truncated.
            low, high = jnp.round(low), jnp.round(high)
        low = _convert_element_type(low, dtype, _weak(x))
        high = _convert_element_type(high, dtype, _weak(x))
        x = _lax.concatenate(
            [jnp.repeat(low, before, axis=axis), x, jnp.repeat(high, after, axis=axis)], axis
        )
    return x


def _pad_empty(x: Array, widths: Pairs) -> Array:
    # JAX's "empty" padding is zeros.
    for axis, (before, after) in enumerate(widths):
        shape = shape_of(x)
        head = jnp.empty_like(x, shape=(*shape[:axis], before, *shape[axis + 1 :]))
        tail = jnp.empty_like(x, shape=(*shape[:axis], after, *shape[axis + 1 :]))
        x = _lax.concatenate([head, x, tail], axis)
    return x


def _pad_with_function(
    x: Array, widths: Pairs, func: Callable[..., Any], kwargs: dict[str, Any]
) -> Array:
    """Zero-pad, then give each 1-D run along each axis in turn to `func(row, (before, after),
    axis, kwargs)`; its returned row replaces the run."""
    # Re-reading the widths rejects a 0-d array (its widths are an empty tuple), as JAX does.
    widths = _as_pairs(widths, len(shape_of(x)), "pad_width")

    def run(a: Array) -> Array:
        out = _pad_constant(a, widths, jnp.asarray(0))
        for axis in range(len(shape_of(out))):
            out = jnp.apply_along_axis(func, axis, out, widths[axis], axis, kwargs)
        return out

    if _current_trace.get() is EVAL_TRACE:
        # Outside any trace `func` would get host arrays, without JAX's array methods
        # (`row.at[...]`); staging it hands it tracers, as under a transformation.
        return Jitted(run)(x)
    return run(x)


@partial(Jitted, static_argnums=(1, 2, 4, 5, 6))
def _pad(
    array: Array,
    pad_width: Pairs,
    mode: str,
    constant_values: Array,
    stat_length: Any,
    end_values: Any,
    reflect_type: str,
) -> Array:
    x = jnp.asarray(array)
    nd = len(shape_of(x))
    if nd == 0:
        return x
    if any(lo < 0 or hi < 0 for lo, hi in pad_width):
        raise ValueError("index can't contain negative values")
    if mode == "constant":
        return _pad_constant(x, pad_width, constant_values)
    if mode == "wrap":
        return _pad_wrap(x, pad_width)
    if mode in ("reflect", "symmetric"):
        return _pad_mirror(x, pad_width, mode, reflect_type)
    if mode == "edge":
        return _pad_edge(x, pad_width)
    if mode == "linear_ramp":
        return _pad_linear_ramp(x, pad_width, _as_pairs(end_values, nd, "end_values"))
    if mode in _STATISTICS:
        lengths = None if stat_length is None else _as_pairs(stat_length, nd, "stat_length")
        return _pad_statistic(x, pad_width, lengths, mode)
    return _pad_empty(x, pad_width)


def pad(
    array: ArrayLike,
    pad_width: Any,
    mode: str | Callable[..., Any] = "constant",
    **kwargs: Any,
) -> Array:
    """`array` padded by `pad_width` (per axis `(before, after)` counts) as `mode` says.

    Raises:
        TypeError: non-integral or ragged `pad_width`.
        ValueError: negative widths, a `pad_width` of the wrong shape, or a keyword argument
            the mode does not take.
        NotImplementedError: an unknown mode.
    """
    (x,) = ensure_arraylike("pad", array)
    nd = len(shape_of(x))
    pairs = _as_pairs(pad_width, nd, "pad_width")
    if not all(_is_integral(lo) and _is_integral(hi) for lo, hi in pairs):
        raise TypeError("`pad_width` must be of integral type.")
    # The widths stay NumPy scalars, as in JAX: they print so (`np.int64(1)`) where they
    # land in a parameter, e.g. the constant mode's `padding_config`.
    if callable(mode):
        return _pad_with_function(x, pairs, mode, kwargs)
    if mode not in _MODE_KWARGS:
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.")
    unsupported = set(kwargs) - set(_MODE_KWARGS[mode])
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    return _pad(
        x,
        pairs,
        mode,
        kwargs.get("constant_values", 0),
        kwargs.get("stat_length"),
        kwargs.get("end_values", 0),
        kwargs.get("reflect_type", "even"),
    )


__all__ = ["pad"]
