"""Index-driven edits of `jax.numpy`: `delete`, `insert`, `extract`, `compress`, `choose`, and
the functional `place`, `put` and `put_along_axis` (JAX arrays are immutable, so each returns
an edited copy); and the argument helpers the index tricks share."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

import lamina_core.numpy as jnp
from lamina_core.ir import dtypes as _dtypes
from lamina_core.numpy._index_update import at
from lamina_core.numpy._indexing import getitem
from lamina_core.numpy._reductions import canonicalize_axis, ensure_arraylike
from lamina_core.numpy._util import Array, ArrayLike, dtype_of, shape_of
from lamina_core.trace import Tracer, concrete_or_error
from lamina_core.transforms import jit


def _canonical(x: Any) -> Any:
    """`x` in its canonical dtype: 64-bit host arrays become 32-bit ones, as JAX's arrays."""
    dtype = dtype_of(x)
    canonical = _dtypes.canonicalize_dtype(dtype)
    return x if canonical == dtype else jnp.asarray(x, dtype=canonical)


def _arraylike(name: str, *args: Any) -> list[Any]:
    return [_canonical(x) for x in ensure_arraylike(name, *args)]


def _size(x: Any) -> int:
    return math.prod(shape_of(x))


# --- delete, insert ---------------------------------------------------------------------------


def _along(axis: int, index: Any) -> tuple[Any, ...]:
    return (slice(None),) * axis + (index,)


def delete(
    arr: ArrayLike,
    obj: ArrayLike | slice,
    axis: int | None = None,
    *,
    assume_unique_indices: bool = False,
) -> Array:
    """`arr` without the entries at `obj` (an index, a slice, indices or a boolean mask) along
    `axis` (of the flattened array when None).

    Integer arrays of indices must be concrete, unless `assume_unique_indices` promises they
    have no duplicates (then they may be traced)."""
    (a,) = _arraylike("delete", arr)
    if axis is None:
        a = jnp.ravel(a)
        axis = 0
    axis = canonicalize_axis(axis, len(shape_of(a)))
    n = shape_of(a)[axis]
    try:
        index = operator.index(obj)  # type: ignore[arg-type]
    except TypeError:
        pass
    else:
        index = canonicalize_axis(index, n)
        before = getitem(a, _along(axis, slice(0, index)))
        after = getitem(a, _along(axis, slice(index + 1, None)))
        return jnp.concatenate([before, after], axis=axis)
    if isinstance(obj, slice):
        obj = getitem(jnp.arange(n), obj)
        assume_unique_indices = True
    # Both arguments are checked, so that the message names the right position.
    ensure_arraylike("delete", a, obj)
    if _dtypes.issubdtype(dtype_of(obj), np.integer) and assume_unique_indices:
        # Sorted, each index less the number of earlier ones is where it falls among the kept
        # positions; each kept position then moves past the deleted ones at or before it.
        idx = jnp.ravel(_canonical(jnp.asarray(obj)))
        idx = jnp.clip(jnp.where(jnp.less(idx, 0), jnp.add(idx, n), idx), 0, n)
        idx = jnp.sort(idx)
        idx = jnp.subtract(idx, jnp.arange(_size(idx), dtype=dtype_of(idx)))
        kept = jnp.arange(n - _size(idx), dtype=dtype_of(idx))
        later = jnp.greater_equal(jnp.expand_dims(kept, 0), jnp.expand_dims(idx, 1))
        passed = jnp.sum(later, axis=0, dtype=dtype_of(kept))
        return getitem(a, _along(axis, jnp.add(kept, passed)))
    mask_of = np.asarray(concrete_or_error(obj, "'obj' array argument of jnp.delete()"))
    if _dtypes.issubdtype(mask_of.dtype, np.integer):
        mask = np.ones(n, dtype=bool)
        mask[mask_of] = False
    elif mask_of.dtype == bool:
        if mask_of.shape != (n,):
            raise ValueError(
                "np.delete(arr, obj): for boolean indices, obj must be one-dimensional with "
                "length matching specified axis."
            )
        mask = ~mask_of
    else:
        raise ValueError(
            f"np.delete(arr, obj): got obj.dtype={mask_of.dtype}; must be integer or bool."
        )
    return getitem(a, _along(axis, mask))


def insert(
    arr: ArrayLike, obj: ArrayLike | slice, values: ArrayLike, axis: int | None = None
) -> Array:
    """`arr` with `values` inserted before the index or indices `obj` (a slice, an integer, or
    a 1-D integer array, which may be traced) along `axis` (flattened when None)."""
    a, _, vals = _arraylike("insert", arr, 0 if isinstance(obj, slice) else obj, values)
    if axis is None:
        a = jnp.ravel(a)
        axis = 0
    axis = concrete_or_error(axis, "axis argument of jnp.insert()")
    axis = canonicalize_axis(axis, len(shape_of(a)))
    n_input = shape_of(a)[axis]
    if isinstance(obj, slice):
        indices = jnp.arange(*obj.indices(n_input))
    else:
        indices = _canonical(jnp.asarray(obj))
    if len(shape_of(indices)) > 1:
        raise ValueError(
            f"jnp.insert(): obj must be a slice, a one-dimensional array, or a scalar; got {obj}"
        )
    if not _dtypes.issubdtype(dtype_of(indices), np.integer):
        if not _size(indices) and not isinstance(obj, Tracer):
            indices = jnp.asarray(indices, dtype=int)
        else:
            raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj}")
    vals = jnp.array(vals, ndmin=len(shape_of(a)), dtype=dtype_of(a), copy=False)
    if _size(indices) == 1:
        index = getitem(jnp.ravel(indices), 0)
        if not shape_of(indices):
            vals = jnp.moveaxis(vals, 0, axis)
        indices = jnp.full(shape_of(vals)[axis], index)
    n_insert = jnp.broadcast_shapes(shape_of(indices), (shape_of(vals)[axis],))[0]
    out_shape = list(shape_of(a))
    out_shape[axis] += n_insert
    out = jnp.zeros_like(a, shape=tuple(out_shape))
    indices = jnp.where(jnp.less(indices, 0), jnp.add(indices, n_input), indices)
    indices = jnp.clip(indices, 0, n_input)
    # Inserted values land at their index plus the number of values inserted before them.
    values_ind = at(indices)[jnp.argsort(indices)].add(
        jnp.arange(n_insert, dtype=dtype_of(indices))
    )
    arr_mask = at(jnp.ones(n_input + n_insert, dtype=bool))[values_ind].set(False)
    (arr_ind,) = jnp.nonzero(arr_mask, size=n_input)
    out = at(out)[_along(axis, values_ind)].set(vals)
    result: Array = at(out)[_along(axis, arr_ind)].set(a)
    return result


# --- extract, compress, choose ----------------------------------------------------------------


def extract(
    condition: ArrayLike, arr: ArrayLike, *, size: int | None = None, fill_value: ArrayLike = 0
) -> Array:
    """The elements of `arr` where `condition` is true (both flattened). With `size`, the
    result has `size` entries, padded with `fill_value`."""
    # "extreact" is how JAX's check names this function.
    ensure_arraylike("extreact", condition, arr, fill_value)
    return compress(jnp.ravel(condition), jnp.ravel(arr), size=size, fill_value=fill_value)


def compress(
    condition: ArrayLike,
    a: ArrayLike,
    axis: int | None = None,
    *,
    size: int | None = None,
    fill_value: ArrayLike = 0,
    out: None = None,
) -> Array:
    """The slices of `a` along `axis` (the flattened `a` when None) where the 1-D `condition`
    is true. With a static `size` the result has that length, padded with `fill_value`, and
    `condition` may be traced."""
    cond, arr, fill = _arraylike("compress", condition, a, fill_value)
    cond = jnp.asarray(cond, dtype=bool)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    if len(shape_of(cond)) != 1:
        raise ValueError("condition must be a 1D array")
    if axis is None:
        axis = 0
        arr = jnp.ravel(arr)
    else:
        arr = jnp.moveaxis(arr, axis, 0)
    length = shape_of(arr)[0]
    cond, extra = getitem(cond, slice(None, length)), getitem(cond, slice(length, None))
    arr = getitem(arr, slice(None, shape_of(cond)[0]))
    if size is None:
        if jnp.any(extra):
            raise ValueError("condition contains entries that are out of bounds")
        result = getitem(arr, cond)
    elif not 0 <= size <= shape_of(arr)[0]:
        raise ValueError(
            "size must be positive and not greater than the size of the array axis; "
            f"got {size=} for a.shape[axis]={shape_of(arr)[0]}"
        )
    else:
        mask = jnp.expand_dims(cond, tuple(range(1, len(shape_of(arr)))))
        arr = jnp.where(mask, arr, jnp.array(fill, dtype=dtype_of(arr)))
        order = jnp.argsort(cond, stable=True, descending=True)
        result = getitem(getitem(arr, order), slice(None, size))
    moved: Array = jnp.moveaxis(result, 0, axis)
    return moved


def choose(
    a: ArrayLike,
    choices: Array | np.ndarray | Sequence[ArrayLike],
    out: None = None,
    mode: str = "raise",
) -> Array:
    """Elementwise selection: entry `i` of the result is `choices[a[i]][i]` (all broadcast
    together). Out-of-range choices raise (`a` must then be concrete), wrap or clip."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    idx, *options = _arraylike("choose", a, *choices)
    if not _dtypes.issubdtype(dtype_of(idx), np.integer):
        raise ValueError("`a` array must be integer typed")
    n = len(options)
    if mode == "raise":
        idx = concrete_or_error(
            idx,
            "The error occurred because jnp.choose was jit-compiled with mode='raise'. "
            "Use mode='wrap' or mode='clip' instead.",
        )
        concrete = np.asarray(idx)
        if np.any((concrete < 0) | (concrete >= n)):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        idx = jnp.remainder(idx, n)
    elif mode == "clip":
        idx = jnp.clip(idx, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    idx, *options = jnp.broadcast_arrays(idx, *options)
    grid = jnp.indices(shape_of(idx), sparse=True)
    return getitem(jnp.array(options), (idx, *grid))


# --- place, put, put_along_axis ---------------------------------------------------------------


def _tile_to_size(x: Array, size: int) -> Array:
    if _size(x) < size:
        x = jnp.tile(x, -(-size // _size(x)))
    return getitem(x, slice(None, size)) if _size(x) > size else x


def place(arr: ArrayLike, mask: ArrayLike, vals: ArrayLike, *, inplace: bool = True) -> Array:
    """A copy of `arr` with the entries where `mask` is true set, in order, to `vals`
    (repeated as needed). JAX arrays are immutable: `inplace=False` is required."""
    data, mask_arr, vals_arr = _arraylike("place", arr, mask, vals)
    vals_arr = jnp.ravel(vals_arr)
    if inplace:
        raise ValueError(
            "jax.numpy.place cannot modify arrays in-place, because JAX arrays are immutable. "
            "Pass inplace=False to instead return an updated array."
        )
    if _size(data) != _size(mask_arr):
        raise ValueError("place: arr and mask must be the same size")
    if not _size(vals_arr):
        raise ValueError("Cannot place values from an empty array")
    if not _size(data):
        return data
    n = _size(mask_arr)
    (indices,) = jnp.nonzero(jnp.ravel(mask_arr), size=n, fill_value=n)
    vals_arr = _tile_to_size(vals_arr, n)
    flat = at(jnp.ravel(data))[indices].set(vals_arr, mode="drop")
    return jnp.reshape(flat, shape_of(data))


def _unravel(flat: Array, shape: tuple[int, ...]) -> tuple[Array, ...]:
    """`unravel_index` as `put` sees it: by repeated `divmod`, whatever the index dtype, with
    positions past either end clamped to it."""
    coords: list[Array] = []
    for size in reversed(shape):
        flat, coord = jnp.divmod(flat, size)
        coords.insert(0, coord)
    past_end = jnp.greater(flat, 0)
    before_start = (
        jnp.asarray(False)
        if _dtypes.issubdtype(dtype_of(flat), np.unsignedinteger)
        else jnp.less(flat, -1)
    )
    return tuple(
        jnp.where(past_end, size - 1, jnp.where(before_start, 0, coord))
        for size, coord in zip(shape, coords, strict=True)
    )


def put(
    a: ArrayLike, ind: ArrayLike, v: ArrayLike, mode: str | None = None, *, inplace: bool = True
) -> Array:
    """A copy of `a` with the flat positions `ind` set to `v` (repeated as needed); indices
    out of range are clipped (`mode=None` or `"clip"`) or wrapped (`"wrap"`). JAX arrays are
    immutable: `inplace=False` is required."""
    if inplace:
        raise ValueError(
            "jax.numpy.put cannot modify arrays in-place, because JAX arrays are immutable. "
            "Pass inplace=False to instead return an updated array."
        )
    arr, ind_arr, _ = _arraylike("put", a, ind, v)
    ind_arr = jnp.ravel(ind_arr)
    v_arr = jnp.ravel(v)
    total = _size(arr)
    if not total or not _size(ind_arr) or not _size(v_arr):
        return arr
    v_arr = _tile_to_size(v_arr, _size(ind_arr))
    if mode is None:
        scatter_mode = "drop"
    elif mode == "clip":
        ind_arr = jnp.clip(ind_arr, 0, total - 1)
        scatter_mode = "promise_in_bounds"
    elif mode == "wrap":
        ind_arr = jnp.remainder(ind_arr, total)
        scatter_mode = "promise_in_bounds"
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    else:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got {mode=}")
    where = _unravel(ind_arr, shape_of(arr))
    result: Array = at(arr)[where].set(v_arr, mode=scatter_mode)
    return result


def _put_along_axis_body(
    arr: ArrayLike,
    indices: ArrayLike,
    values: ArrayLike,
    axis: int | None,
    inplace: bool = True,
    *,
    mode: str | None = None,
) -> Array:
    if inplace:
        # JAX's message, with its missing space ("arraysare").
        raise ValueError(
            "jax.numpy.put_along_axis cannot modify arrays in-place, because JAX arrays"
            "are immutable. Pass inplace=False to instead return an updated array."
        )
    a, idx, vals = _arraylike("put_along_axis", arr, indices, values)
    original_shape = shape_of(a)
    flattened = axis is None
    if axis is None:
        a = jnp.ravel(a)
        axis = 0
    if len(shape_of(a)) != len(shape_of(idx)):
        raise ValueError(
            "put_along_axis arguments 'arr' and 'indices' must have same ndim. Got "
            f"arr.ndim={len(shape_of(a))} and indices.ndim={len(shape_of(idx))}."
        )
    try:
        vals = jnp.broadcast_to(vals, shape_of(idx))
    except ValueError:
        raise ValueError(
            "put_along_axis argument 'values' must be broadcastable to 'indices'. Got "
            f"values.shape={shape_of(vals)} and indices.shape={shape_of(idx)}."
        ) from None
    grid = tuple(jnp.indices(shape_of(a), sparse=True))
    if axis < 0:
        axis += len(grid)
    # JAX checks the axis no further than this assertion: kept, for its error.
    assert 0 <= axis < len(grid), (axis, len(grid))
    where = (*grid[:axis], idx, *grid[axis + 1 :])
    result = at(a)[where].set(vals, mode=mode)
    if flattened:
        result = jnp.reshape(result, original_shape)
    return result


_put_along_axis_body.__name__ = _put_along_axis_body.__qualname__ = "put_along_axis"
_put_along_axis_jit = jit(_put_along_axis_body, static_argnames=("axis", "inplace", "mode"))


def put_along_axis(
    arr: ArrayLike,
    indices: ArrayLike,
    values: ArrayLike,
    axis: int | None,
    inplace: bool = True,
    *,
    mode: str | None = None,
) -> Array:
    """A copy of `arr` with `values` written at `indices` along `axis` (the scatter matching
    `take_along_axis`). JAX arrays are immutable: `inplace=False` is required."""
    result: Array = _put_along_axis_jit(arr, indices, values, axis, inplace, mode=mode)
    return result


__all__ = [
    "choose",
    "compress",
    "delete",
    "extract",
    "insert",
    "place",
    "put",
    "put_along_axis",
]
